import { decodeEd25519Multikey } from '@wmp/jcs-signing';
import type { Context } from 'hono';
import { authenticate } from './auth.js';
import { objectWith, parseBody, readBody } from './body.js';
import type { BoxContext } from './context.js';
import { BoxApiError } from './errors.js';
import { jsonResponse } from './respond.js';

/** A multikey is ~48 characters; 64 bytes per entry covers quotes, commas and some whitespace. */
const BYTES_PER_CONTACT = 64;

function isSigningKey(value: unknown): value is string {
  if (typeof value !== 'string' || value.length > 128) return false;
  try {
    decodeEd25519Multikey(value);
    return true;
  } catch {
    return false;
  }
}

/** `PUT /allow {contacts}`, signed: replaces the caller's allow list; answers the list as stored. */
export async function putAllow(c: Context, box: BoxContext): Promise<Response> {
  const { store } = box.options;
  const bytes = await readBody(c.req.raw, store.limits.maxContacts * BYTES_PER_CONTACT + 1024, box.options);
  const key = await authenticate(c, box, bytes, 'changes');
  const { contacts } = objectWith(parseBody(bytes), ['contacts']);
  if (!Array.isArray(contacts) || !contacts.every(isSigningKey)) {
    throw new BoxApiError('bad_request', { message: 'contacts must be an array of Ed25519 multikeys' });
  }
  if (contacts.length > store.limits.maxContacts) {
    throw new BoxApiError('bad_request', { message: `at most ${store.limits.maxContacts} contacts` });
  }
  await store.putAllow(key, contacts);
  return jsonResponse(200, { contacts: await store.getAllow(key) });
}

/** `GET /allow`, signed: the caller's allow list. */
export async function getAllow(c: Context, box: BoxContext): Promise<Response> {
  const key = await authenticate(c, box, undefined, 'reads');
  return jsonResponse(200, { contacts: await box.options.store.getAllow(key) });
}
