import { didOf, publicKeyFromDidJwk, publicKeyFromDidKey } from './did.js';
import { InvalidKeyError } from './errors.js';

/** Finds the Ed25519 public key for a kid (a DID URL) or an identifier; `undefined` when unknown. */
export interface KeyResolver {
  resolve(kidOrIdentifier: string): Promise<Uint8Array | undefined> | Uint8Array | undefined;
}

/** Resolves `did:key` and `did:jwk` (the key is in the identifier); anything else is unknown. */
export const didKeyResolver: KeyResolver = {
  resolve(kid) {
    try {
      const did = didOf(kid);
      if (did.startsWith('did:key:')) return publicKeyFromDidKey(kid);
      if (did.startsWith('did:jwk:')) return publicKeyFromDidJwk(kid);
    } catch (e) {
      if (e instanceof InvalidKeyError) return undefined;
      throw e;
    }
    return undefined;
  },
};

/** Tries resolvers in order; the first that knows the kid wins. */
export function chainResolvers(...resolvers: KeyResolver[]): KeyResolver {
  return {
    async resolve(kid) {
      for (const r of resolvers) {
        const key = await r.resolve(kid);
        if (key) return key;
      }
      return undefined;
    },
  };
}
