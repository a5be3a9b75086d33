import { b64urlDecode, b64urlEncode, generateKeypair, type Keypair, keypairFromSeed } from '@wmp/jcs-signing';
import { createCard, type EncKeypair, encKeypairFromSecret, generateEncKeypair, type OhanCard } from '@wmp/ohan-seal';
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

  private constructor(keypair: Keypair, encKeypair: EncKeypair) {
    this.keypair = keypair;
    this.encKeypair = encKeypair;
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

  /** Reads the stored form; throws `IdentityError` for anything malformed or a DID that is not the key's. */
  static fromJSON(json: IdentityJson): Identity {
    if (json === null || typeof json !== 'object' || json.version !== 1) throw new IdentityError();
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
    return Identity.fromJSON(json);
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
