import { b64urlDecode, b64urlEncode, generateKeypair, type Keypair, keypairFromSeed } from '@wmp/jcs-signing';
import { createCard, type EncKeypair, encKeypairFromSecret, generateEncKeypair, type OhanCard } from '@wmp/ohan-seal';
import type { X509Identity } from '@wmp/session';
import type { ClientStore } from '../store/store.js';
import { IdentityError } from './errors.js';

/** A signed `ohan.card.1`: the signing key, the encryption key and the boxes of an identity. */
export type Card = OhanCard;

/** The stored form of an identity (secret keys, base64url): what `save` writes and a CLI exports. */
export interface IdentityJson {
  readonly version: 1;
  /** The did:key of the signing key, checked on import. */
  readonly did: string;
  /** The 32-byte Ed25519 seed. */
  readonly signing_seed: string;
  /** The 32-byte X25519 secret of the card's `enc` key. */
  readonly enc_secret: string;
  /** An X.509 identity for WMP (`Identity.fromX509`): the chain (leaf first) and its PKCS#8 key, PEM. */
  readonly x509?: { readonly certificates_pem: string; readonly private_key_pem: string };
}

/** An X.509 certificate chain and its private key, PEM (what `wmp keys import --cert --key` reads). */
export interface X509Pem {
  /** The leaf first, then the intermediates. */
  readonly certificatesPem: string;
  /** PKCS#8 (`-----BEGIN PRIVATE KEY-----`), unencrypted. */
  readonly privateKeyPem: string;
}

/** Where `save` and `load` keep the identity in a `ClientStore`. */
export const IDENTITY_STORE_KEY = 'identity';

const B64URL_32 = /^[A-Za-z0-9_-]{43}$/;

function secret32(text: unknown): Uint8Array {
  if (typeof text !== 'string' || !B64URL_32.test(text)) throw new IdentityError();
  const bytes = b64urlDecode(text);
  if (bytes.length !== 32) throw new IdentityError();
  return bytes;
}

/**
 * Who the application is: an Ed25519 signing key (its did:key names it in WMP, signs challenges,
 * messages and OHAN events and requests) and an independent X25519 key that sealed mail is
 * encrypted to (the card's `enc`: one key, one purpose).
 */
export class Identity {
  readonly keypair: Keypair;
  readonly encKeypair: EncKeypair;
  /** The X.509 identity WMP sessions authenticate with (`x5c`), when it has one. */
  readonly x509: X509Identity | undefined;
  readonly #x509Pem: X509Pem | undefined;

  private constructor(keypair: Keypair, encKeypair: EncKeypair, x509?: { identity: X509Identity; pem: X509Pem }) {
    this.keypair = keypair;
    this.encKeypair = encKeypair;
    this.x509 = x509?.identity;
    this.#x509Pem = x509?.pem;
  }

  /**
   * This identity with an X.509 certificate chain and its key for WMP: the relay then knows it as
   * its `x509:*` id (the leaf's first dNSName SAN, else its first URI SAN, else its fingerprint)
   * and it authenticates by `x5c`. Its Ed25519 and X25519 keys stay for what only they do (OHAN
   * cards and sealed mail, MLS). A fresh identity's keys without `base`. `IdentityError` when the
   * PEM is not a chain and the key of its leaf.
   */
  static async fromX509(pem: X509Pem, base: Identity = Identity.generate()): Promise<Identity> {
    // Loaded on demand: pkijs is only for those who use X.509.
    const { x509Identity } = await import('@wmp/session/x509');
    let identity: X509Identity;
    try {
      identity = await x509Identity(pem);
    } catch {
      throw new IdentityError();
    }
    return new Identity(base.keypair, base.encKeypair, { identity, pem });
  }

  /** Reads the stored form, X.509 identities included (their key is imported, hence async). */
  static async restore(json: IdentityJson): Promise<Identity> {
    const x509 = (json as { x509?: unknown } | null)?.x509;
    if (x509 === undefined) return Identity.fromJSON(json);
    const { certificates_pem, private_key_pem } = (x509 ?? {}) as Record<string, unknown>;
    if (typeof certificates_pem !== 'string' || typeof private_key_pem !== 'string') throw new IdentityError();
    const base = Identity.fromJSON({
      version: json.version,
      did: json.did,
      signing_seed: json.signing_seed,
      enc_secret: json.enc_secret,
    });
    return Identity.fromX509({ certificatesPem: certificates_pem, privateKeyPem: private_key_pem }, base);
  }

  /** A fresh identity: new random signing and encryption keys. */
  static generate(): Identity {
    return new Identity(generateKeypair(), generateEncKeypair());
  }

  /** An identity from existing secrets: a 32-byte Ed25519 seed and a 32-byte X25519 secret (fresh when absent). */
  static fromSecrets(signingSeed: Uint8Array, encSecret?: Uint8Array): Identity {
    try {
      return new Identity(
        keypairFromSeed(signingSeed),
        encSecret === undefined ? generateEncKeypair() : encKeypairFromSecret(encSecret),
      );
    } catch {
      throw new IdentityError();
    }
  }

  /**
   * Reads the stored form of an identity without X.509 (`restore` reads both); throws
   * `IdentityError` for anything malformed, a DID that is not the key's, or an X.509 one.
   */
  static fromJSON(json: IdentityJson): Identity {
    if (json === null || typeof json !== 'object' || json.version !== 1) throw new IdentityError();
    if (json.x509 !== undefined) throw new IdentityError('ERR_IDENTITY_NEEDS_RESTORE');
    const identity = Identity.fromSecrets(secret32(json.signing_seed), secret32(json.enc_secret));
    if (json.did !== identity.did) throw new IdentityError();
    return identity;
  }

  /** The identity saved in `store` by `save`, or `undefined` when there is none. */
  static async load(store: ClientStore): Promise<Identity | undefined> {
    const text = await store.get(IDENTITY_STORE_KEY);
    if (text === undefined) return undefined;
    let json: IdentityJson;
    try {
      json = JSON.parse(text) as IdentityJson;
    } catch {
      throw new IdentityError();
    }
    return Identity.restore(json);
  }

  /** The identity stored in `store`, or a new one that is saved there first. */
  static async loadOrCreate(store: ClientStore): Promise<Identity> {
    const existing = await Identity.load(store);
    if (existing) return existing;
    const identity = Identity.generate();
    await identity.save(store);
    return identity;
  }

  /** `did:key:z6Mk...` of the signing key. */
  get did(): string {
    return this.keypair.did;
  }

  /** What WMP knows this identity by: its X.509 id when it has one, else `did`. */
  get id(): string {
    return this.x509?.id ?? this.did;
  }

  /** The Ed25519 Multikey `z6Mk...`: the card's `key`, OHAN's `to` and `from_key`. */
  get signingKey(): string {
    return this.keypair.multikey;
  }

  /** The X25519 Multikey `z6LS...`: the card's `enc`. */
  get encKey(): string {
    return this.encKeypair.multikey;
  }

  /** The secret keys in their stored form. Keep it as secret as the keys themselves. */
  toJSON(): IdentityJson {
    return {
      version: 1,
      did: this.did,
      signing_seed: b64urlEncode(this.keypair.exportSeed()),
      enc_secret: b64urlEncode(this.encKeypair.secretKey),
      ...(this.#x509Pem
        ? { x509: { certificates_pem: this.#x509Pem.certificatesPem, private_key_pem: this.#x509Pem.privateKeyPem } }
        : {}),
    };
  }

  /** Writes the stored form under `IDENTITY_STORE_KEY`. */
  async save(store: ClientStore): Promise<void> {
    await store.set(IDENTITY_STORE_KEY, JSON.stringify(this.toJSON()));
  }

  /**
   * A signed card naming this identity's keys and the box origins (1..16) that hold its mail,
   * stamped at `stampBits` when given (a box asks a key it does not know for a stamp of its
   * stranger strength).
   */
  createCard(
    relays: readonly string[],
    now: Date = new Date(),
    stamp: { readonly bits?: number; readonly signal?: AbortSignal } = {},
  ): Promise<Card> {
    return createCard({
      signer: this.keypair,
      enc: this.encKey,
      relays,
      ts: now,
      ...(stamp.bits === undefined ? {} : { stampBits: stamp.bits }),
      ...(stamp.signal === undefined ? {} : { mint: { signal: stamp.signal } }),
    });
  }
}
