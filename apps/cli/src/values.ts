// Kinds of argument and option values, each with its check and conversion (a map, so a new kind is
// one entry). A value that does not fit is a usage error that names the argument and shows a
// correct example.
import { decodeEd25519Multikey, didKeyFromPublicKey, publicKeyFromDidJwk, publicKeyFromDidKey } from '@wmp/jcs-signing';
import { isBoxOrigin } from '@wmp/ohan-seal';
import { didWebUrl } from '@wmp/session';
import { UsageError } from './errors.js';

export type ValueKind = 'text' | 'int' | 'url' | 'did' | 'recipient' | 'identifier' | 'target' | 'path' | 'name';

/** Why a value was refused, with an example of a good one (the caller adds the argument's name). */
export class ValueError extends UsageError {
  constructor(message: string) {
    super(message);
    this.name = 'ValueError';
  }
}

interface Limits {
  readonly min?: number | undefined;
  readonly max?: number | undefined;
}

/** What each kind is called in help (`--relay <url>`). */
export const PLACEHOLDER: Readonly<Record<ValueKind, string>> = {
  text: 'text',
  int: 'n',
  url: 'url',
  did: 'did',
  recipient: 'id',
  identifier: 'id',
  target: 'url|id',
  path: 'file',
  name: 'name',
};

const MAX_TEXT = 64 * 1024;

/** An identity as `did:key:z6Mk...` (an Ed25519 Multikey `z6Mk...` is accepted and converted). */
export function toDid(text: string): string {
  const t = text.trim();
  try {
    const publicKey = t.startsWith('did:key:') ? publicKeyFromDidKey(t) : decodeEd25519Multikey(t);
    return didKeyFromPublicKey(publicKey);
  } catch {
    // Shaped like one but not one (a character mistyped, dropped or added): say so, not "unknown".
    if (/^(did:key:)?z6Mk/.test(t)) {
      throw new ValueError(
        `"${short(t)}" looks like a did:key but does not decode to an Ed25519 key: check it for a typo`,
      );
    }
    throw new ValueError(`"${short(t)}" is not an Ed25519 did:key (like did:key:z6Mk...) or Multikey (z6Mk...)`);
  }
}

/** X.509 identifiers (core §7.1): `x509:san:dns:<name>`, `x509:san:uri:<uri>`, `x509:sha256:<hex>`. */
const X509_ID = /^x509:(san:dns:[A-Za-z0-9.-]{1,253}|san:uri:[\x21-\x7e]{1,2048}|sha256:[0-9a-f]{64})$/;

/** A did:jwk of an Ed25519 key (what the relays authenticate), as it is. */
function toDidJwk(t: string): string {
  try {
    publicKeyFromDidJwk(t);
    return t;
  } catch {
    throw new ValueError(`"${short(t)}" is not a did:jwk of an Ed25519 key (it does not decode: check it for a typo)`);
  }
}

/** A did:web (`did:web:example.com`, `did:web:example.com:users:bob`, a port as `%3A8443`), as it is. */
function toDidWeb(t: string): string {
  try {
    didWebUrl(t);
    return t;
  } catch {
    throw new ValueError(`"${short(t)}" is not a did:web (like did:web:example.com or did:web:example.com:users:bob)`);
  }
}

/**
 * Whom a live message goes to: a did:key (or Multikey), a did:jwk or did:web, or an X.509
 * identifier; each is checked here, so a mistyped one is refused before anything is sent.
 */
export function toRecipient(text: string): string {
  const t = text.trim();
  if (t.startsWith('x509:')) {
    if (!X509_ID.test(t)) {
      throw new ValueError(`"${short(t)}" is not an X.509 identifier (like x509:san:dns:wallet.example.com)`);
    }
    return t;
  }
  if (t.startsWith('did:jwk:')) return toDidJwk(t);
  if (t.startsWith('did:web:')) return toDidWeb(t);
  if (t.startsWith('did:') && !t.startsWith('did:key:')) {
    throw new ValueError(`"${short(t)}": wmp sends to did:key, did:jwk, did:web and x509: identifiers`);
  }
  return toDid(t);
}

/** What `wmp route` asks about: a recipient, or an `https://` identifier (wmp-tables §5.4). */
export function toIdentifier(text: string): string {
  const t = text.trim();
  if (!t.startsWith('https://')) return toRecipient(t);
  let url: URL;
  try {
    url = new URL(t);
  } catch {
    throw new ValueError(`"${short(t)}" is not an https:// identifier (like https://example.com/bob)`);
  }
  if (url.username || url.password || t.length > 2048) {
    throw new ValueError(`"${short(t)}" is not an https:// identifier (like https://example.com/bob)`);
  }
  return t;
}

/**
 * What `wmp connect` opens a session with: a relay (an `https://` / `http://` / `ws(s)://` URL) or
 * another party through the relay (an identifier, as for `send`).
 */
export function toConnectTarget(text: string): string {
  return /^(https?|wss?):\/\//i.test(text.trim()) ? toRelayUrl(text) : toRecipient(text);
}

/** Whether a `target` value is a relay's URL (else an identifier). */
export function isRelayTarget(target: string): boolean {
  return /^https?:\/\//.test(target);
}

/** A relay origin: `https://host[:port]`, or `http://` on loopback; a trailing slash or `/wmp` is dropped. */
export function toRelayUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new ValueError(`"${short(text)}" is not a URL (like https://relay.example or http://127.0.0.1:8080)`);
  }
  if (url.protocol === 'ws:' || url.protocol === 'wss:') url.protocol = url.protocol === 'ws:' ? 'http:' : 'https:';
  const path = url.pathname.replace(/\/+$/, '');
  if (path !== '' && path !== '/wmp') {
    throw new ValueError(`"${short(text)}" has a path; give the relay's origin (like https://relay.example)`);
  }
  if (url.search || url.hash || url.username || url.password) {
    throw new ValueError(`"${short(text)}" has a query, fragment or credentials; give the relay's origin only`);
  }
  if (!isBoxOrigin(url.origin)) {
    throw new ValueError(`"${short(text)}" must be https:// (http:// only on 127.0.0.1, localhost or [::1])`);
  }
  return url.origin;
}

function short(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

export const CONVERT: Readonly<Record<ValueKind, (text: string, limits: Limits) => string | number>> = {
  text(text) {
    if (text.length > MAX_TEXT) throw new ValueError(`is longer than ${MAX_TEXT} characters`);
    return text;
  },
  int(text, { min = 0, max = Number.MAX_SAFE_INTEGER }) {
    const t = text.trim();
    const n = /^\d+$/.test(t) ? Number(t) : Number.NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      throw new ValueError(`"${short(text)}" is not a whole number from ${min} to ${max}`);
    }
    return n;
  },
  url: toRelayUrl,
  did: toDid,
  recipient: toRecipient,
  identifier: toIdentifier,
  target: toConnectTarget,
  path(text) {
    if (text.trim() === '') throw new ValueError('is empty; give a file name (or - for standard input/output)');
    return text;
  },
  name(text) {
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(text)) {
      throw new ValueError(`"${short(text)}" is not a name (letters, digits, . _ -; up to 64; like team-a)`);
    }
    return text;
  },
};
