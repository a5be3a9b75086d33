import { decodeEd25519Multikey } from '@wmp/jcs-signing';
import { MailboxError } from './errors.js';

/** The Ed25519 Multikey of a `did:key:z6Mk...` or a `z6Mk...` Multikey; `invalid_key` otherwise. */
export function signingKeyOf(key: string): string {
  const multikey = typeof key === 'string' && key.startsWith('did:key:') ? key.slice('did:key:'.length) : key;
  try {
    decodeEd25519Multikey(multikey);
  } catch {
    throw new MailboxError('invalid_key');
  }
  return multikey;
}
