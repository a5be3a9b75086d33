import { b64urlDecode, b64urlEncode } from '@wmp/jcs-signing';
import { ByteReader, ByteWriter } from './byte-codec.js';
import { type CipherSuiteId, cipherSuiteImpl, isSupportedCipherSuite } from './cipher-suites.js';
import { MlsBridgeError } from './errors.js';
import { assertUsableIdentity, didAuthenticationService, type MlsIdentity } from './identity.js';
import {
  generateOwnKeyPackage,
  KEY_PACKAGE_LIFETIME_SECONDS,
  type OwnKeyPackage,
  type PublishedKeyPackage,
  readKeyPackage,
} from './key-package.js';
import {
  type CiphersuiteImpl,
  type ClientConfig,
  defaultKeyPackageEqualityConfig,
  defaultKeyRetentionConfig,
  defaultLifetimeConfig,
  defaultPaddingConfig,
  type KeyRetentionConfig,
  type PrivateKeyPackage,
} from './ts-mls.js';

/** How much a member keeps to read late or out-of-order messages (ts-mls defaults: 10, 4, 200). */
export interface KeyRetention {
  /** Older messages of one sender still readable after a newer one, within an epoch. */
  readonly retainKeysForGenerations?: number;
  /** Past epochs whose application messages are still readable after a commit. */
  readonly retainKeysForEpochs?: number;
  /** How far one sender may run ahead (skipped messages) before decryption refuses. */
  readonly maximumForwardRatchetSteps?: number;
}

export interface MlsClientOptions {
  /** The participant's identity; its key becomes the MLS signature key (a jcs-signing `Keypair` fits). */
  readonly identity: MlsIdentity;
  /** 1 (X25519/AES128GCM/SHA256/Ed25519, the default) or 2 (P-256). */
  readonly cipherSuite?: CipherSuiteId;
  readonly keyPackageLifetimeSeconds?: number;
  readonly keyRetention?: KeyRetention;
  /** Key packages saved by `saveKeyPackages()`, still waiting for their Welcome. */
  readonly keyPackages?: Uint8Array;
  /**
   * Called with `saveKeyPackages()` whenever the unused key packages change (created, consumed by
   * a join). Store it: a key package's private keys are needed when its Welcome arrives.
   */
  readonly persistKeyPackages?: (saved: Uint8Array) => void | Promise<void>;
}

/** What MlsGroup needs from a client, kept out of the public API. */
export interface ClientInternals {
  readonly cs: CiphersuiteImpl;
  readonly config: ClientConfig;
  readonly seed: Uint8Array;
  readonly publicKey: Uint8Array;
  /** Our unused key package named in `refs`, if any (not consumed). */
  findKeyPackage(refs: ReadonlySet<string>): OwnKeyPackage | undefined;
  /** Forgets a key package once its Welcome was processed: key packages are single use. */
  consumeKeyPackage(ref: string): Promise<void>;
}

const internals = new WeakMap<MlsClient, ClientInternals>();

/** MlsGroup's access to a client's keys and configuration. Not exported from the package. */
export function clientInternals(client: MlsClient): ClientInternals {
  const i = internals.get(client);
  if (!i) throw new TypeError('not an MlsClient');
  return i;
}

/**
 * One participant's MLS side: its identity (a DID whose key is the MLS signature key), the
 * ts-mls configuration with the default-deny credential check, and the key packages it has
 * published and not yet used.
 */
export class MlsClient {
  /** The DID in this client's credentials: what `MlsGroup.members` lists for it. */
  readonly identity: string;
  readonly cipherSuite: CipherSuiteId;
  private readonly keyPackages = new Map<string, OwnKeyPackage>();
  private readonly lifetimeSeconds: number;
  private readonly persist: ((saved: Uint8Array) => void | Promise<void>) | undefined;

  private constructor(options: MlsClientOptions, suite: CipherSuiteId, cs: CiphersuiteImpl, seed: Uint8Array) {
    this.identity = options.identity.did;
    this.cipherSuite = suite;
    this.lifetimeSeconds = options.keyPackageLifetimeSeconds ?? KEY_PACKAGE_LIFETIME_SECONDS;
    this.persist = options.persistKeyPackages;
    const keyRetentionConfig: KeyRetentionConfig = { ...defaultKeyRetentionConfig, ...options.keyRetention };
    const config: ClientConfig = {
      keyRetentionConfig,
      lifetimeConfig: defaultLifetimeConfig,
      keyPackageEqualityConfig: defaultKeyPackageEqualityConfig,
      paddingConfig: defaultPaddingConfig,
      authService: didAuthenticationService(suite),
    };
    const publicKey = options.identity.publicKey.slice();
    internals.set(this, {
      cs,
      config,
      seed,
      publicKey,
      findKeyPackage: (refs) => {
        for (const ref of refs) {
          const kp = this.keyPackages.get(ref);
          if (kp) return kp;
        }
        return undefined;
      },
      consumeKeyPackage: async (ref) => {
        if (this.keyPackages.delete(ref)) await this.persist?.(this.saveKeyPackages());
      },
    });
  }

  /** Checks the identity (its DID must name its key, for the suite) and loads saved key packages. */
  static async create(options: MlsClientOptions): Promise<MlsClient> {
    const suite = options.cipherSuite ?? 1;
    if (!isSupportedCipherSuite(suite)) throw new MlsBridgeError('unsupported_cipher_suite');
    const lifetime = options.keyPackageLifetimeSeconds;
    if (lifetime !== undefined && !(Number.isSafeInteger(lifetime) && lifetime > 0)) {
      throw new TypeError('keyPackageLifetimeSeconds must be a positive integer');
    }
    const seed = assertUsableIdentity(options.identity, suite);
    const client = new MlsClient(options, suite, await cipherSuiteImpl(suite), seed);
    if (options.keyPackages) await client.loadKeyPackages(options.keyPackages);
    return client;
  }

  /**
   * A new single-use key package to publish (`ohan.mls.keypackage.publish`). Its private keys stay
   * in this client until the Welcome that uses it is joined.
   */
  async createKeyPackage(): Promise<PublishedKeyPackage> {
    const { seed, publicKey } = clientInternals(this);
    const kp = await generateOwnKeyPackage(this.identity, publicKey, seed, this.cipherSuite, this.lifetimeSeconds);
    this.keyPackages.set(kp.published.ref, kp);
    await this.persist?.(this.saveKeyPackages());
    return kp.published;
  }

  /** The unused key packages, as published. */
  get pendingKeyPackages(): readonly PublishedKeyPackage[] {
    return [...this.keyPackages.values()].map((kp) => kp.published);
  }

  /**
   * The unused key packages with their private keys (init and encryption keys; never the identity
   * key), to pass back as `keyPackages` after a restart. Secret: store it like the identity key.
   */
  saveKeyPackages(): Uint8Array {
    const w = new ByteWriter().u32(this.keyPackages.size);
    for (const kp of this.keyPackages.values()) {
      w.bytes(b64urlDecode(kp.published.keyPackage))
        .bytes(kp.privatePackage.initPrivateKey)
        .bytes(kp.privatePackage.hpkePrivateKey);
    }
    return w.finish();
  }

  private async loadKeyPackages(saved: Uint8Array): Promise<void> {
    const { seed } = clientInternals(this);
    let entries: { text: string; initPrivateKey: Uint8Array; hpkePrivateKey: Uint8Array }[];
    try {
      const r = new ByteReader(saved);
      const n = r.u32();
      entries = [];
      for (let i = 0; i < n; i++) {
        entries.push({ text: b64urlEncode(r.bytes()), initPrivateKey: r.bytes(), hpkePrivateKey: r.bytes() });
      }
      if (!r.done) throw new Error('trailing bytes');
    } catch (e) {
      throw new MlsBridgeError('invalid_state', { cause: e });
    }
    for (const entry of entries) {
      // Expired ones are dropped: nobody can add us with them any more.
      const read = await readKeyPackage(entry.text, this.cipherSuite).catch(() => undefined);
      if (!read || read.info.identity !== this.identity) continue;
      const privatePackage: PrivateKeyPackage = {
        initPrivateKey: entry.initPrivateKey,
        hpkePrivateKey: entry.hpkePrivateKey,
        signaturePrivateKey: seed,
      };
      const published: PublishedKeyPackage = {
        keyPackage: entry.text,
        cipherSuite: this.cipherSuite,
        ref: read.info.ref,
        expires: read.info.expires,
      };
      this.keyPackages.set(read.info.ref, { published, publicPackage: read.keyPackage, privatePackage });
    }
  }
}
