import { generateKeypair, type Keypair, keypairFromSeed, sha256 } from '@wmp/jcs-signing';

/** The relay's own Ed25519 identity: a 32-byte seed, or a keypair. The app layer persists it. */
export type RelayIdentityInput = { readonly seed: Uint8Array } | { readonly keypair: Keypair };

/** The relay's signing identity (did:key): it signs every relay_chain entry it appends. */
export function relayKeypair(input: RelayIdentityInput | undefined): Keypair {
  if (input === undefined) return generateKeypair();
  return 'keypair' in input ? input.keypair : keypairFromSeed(input.seed);
}

const SESSION_TOKEN_LABEL = new TextEncoder().encode('wmp-relay http session tokens v1\0');

/**
 * The key HTTP session tokens are made with, derived from the relay key: every node of a cluster
 * shares the relay key, so any node checks a token another issued (no sticky sessions). A label
 * keeps it apart from the signing key's other uses.
 */
export function sessionTokenKey(identity: Keypair): Uint8Array {
  const seed = identity.exportSeed();
  const input = new Uint8Array(SESSION_TOKEN_LABEL.length + seed.length);
  input.set(SESSION_TOKEN_LABEL);
  input.set(seed, SESSION_TOKEN_LABEL.length);
  seed.fill(0);
  return sha256(input);
}
