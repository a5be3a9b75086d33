import { generateKeypair, type Keypair, keypairFromSeed } from '@wmp/jcs-signing';
import type { RelayIdentityInput } from './config.js';

/** The relay's signing identity (did:key): it signs every relay_chain entry it appends. */
export function relayKeypair(input: RelayIdentityInput | undefined): Keypair {
  if (input === undefined) return generateKeypair();
  return 'keypair' in input ? input.keypair : keypairFromSeed(input.seed);
}
