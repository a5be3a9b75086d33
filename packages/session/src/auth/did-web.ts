import { b64urlDecode, b64urlEncode, decodeEd25519Multikey, fromUtf8, type KeyResolver } from '@wmp/jcs-signing';
import { BoundedMap, ipLiteralOf, isLoopbackHost, isPrivateAddress, parseStrictJson } from '@wmp/jsonrpc-envelope';
import { readCappedBody } from '../capped-body.js';
import { SessionError } from '../errors.js';

/**
 * did:web (W3C CCG did:web method) for `signed_challenge` and for the `kid` of non-repudiation
 * signatures (core §7.5.4): `did:web:<domain>[%3A<port>][:<path>...]` is the DID document at
 * `https://<domain>[:<port>]/<path>/did.json`, or `/.well-known/did.json` without a path. This
 * module is pure and browser-safe; fetching goes through a `DidDocumentFetcher`, of which
 * `webDidFetcher` (WebCrypto platforms, `fetch`) is here and `nodeDidWebFetcher` (DNS answers
 * checked, the connection pinned to the checked address) is in `@wmp/session/node`.
 */

export type DidResolutionFailure =
  | 'invalid_did'
  | 'address_refused'
  | 'timeout'
  | 'too_large'
  | 'redirect'
  | 'http_status'
  | 'network'
  | 'busy'
  | 'invalid_document'
  | 'unknown_key'
  | 'unsupported_key';

/** Why a DID document or a key in it could not be had. `reason` is a fixed vocabulary. */
export class DidResolutionError extends SessionError {
  declare readonly code: 'ERR_DID_RESOLUTION';
  readonly reason: DidResolutionFailure;
  constructor(reason: DidResolutionFailure) {
    super('ERR_DID_RESOLUTION', `did resolution failed: ${reason}`);
    this.name = 'DidResolutionError';
    this.reason = reason;
  }
}

const MAX_DID_LENGTH = 1024;
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const DOMAIN = new RegExp(`^${LABEL}(?:\\.${LABEL})*$`);
const PATH_SEGMENT = /^(?:[A-Za-z0-9._~-]|%[0-9A-Fa-f]{2})+$/;

/** A DNS name of letter-digit-hyphen labels (no trailing dot), at most 253 characters. */
export function isDnsName(name: string): boolean {
  return name.length <= 253 && DOMAIN.test(name);
}

/** The DID part of a DID URL (`did:web:x#key-1` -> `did:web:x`). */
export function didPart(didUrl: string): string {
  const hash = didUrl.indexOf('#');
  return hash < 0 ? didUrl : didUrl.slice(0, hash);
}

/** Where a did:web's document lives; `invalid_did` for anything that is not a plain did:web. */
export function didWebUrl(did: string): URL {
  if (typeof did !== 'string' || did.length > MAX_DID_LENGTH || !did.startsWith('did:web:')) {
    throw new DidResolutionError('invalid_did');
  }
  const [host, ...path] = did.slice('did:web:'.length).split(':');
  // The only percent-encoding a domain may carry is the colon of a port.
  const m = /^([^%]+)(?:%3[Aa]([0-9]{1,5}))?$/.exec(host ?? '');
  if (!m || !isDnsName(m[1]!)) throw new DidResolutionError('invalid_did');
  const port = m[2] === undefined ? undefined : Number(m[2]);
  if (port !== undefined && (port < 1 || port > 65535 || String(port) !== m[2])) {
    throw new DidResolutionError('invalid_did');
  }
  if (path.some((p) => !PATH_SEGMENT.test(p) || p === '.' || p === '..')) throw new DidResolutionError('invalid_did');
  const file = path.length === 0 ? '.well-known/did.json' : `${path.join('/')}/did.json`;
  try {
    return new URL(`https://${m[1]}${port === undefined ? '' : `:${port}`}/${file}`);
  } catch {
    throw new DidResolutionError('invalid_did');
  }
}

/** What a fetcher returns: the status, the `Cache-Control` header and at most `maxBytes` of body. */
export interface DidFetchResponse {
  readonly status: number;
  readonly cacheControl: string | null;
  readonly body: Uint8Array;
}

/**
 * Fetches a DID document: a GET without redirects (a 3xx is `redirect`), refusing addresses the
 * operator did not allow (`address_refused`), stopping past `maxBytes` (`too_large`), and giving
 * up when `signal` aborts. Throws `DidResolutionError`.
 */
export type DidDocumentFetcher = (
  url: URL,
  options: { readonly signal: AbortSignal; readonly maxBytes: number },
) => Promise<DidFetchResponse>;

export interface WebDidFetcherOptions {
  readonly fetch?: typeof globalThis.fetch;
  /** Allow loopback and private addresses (tests, private deployments). Default false. */
  readonly allowPrivateAddresses?: boolean;
}

/**
 * A fetcher on the platform's `fetch` (browsers, workers). It can refuse only hosts that are
 * themselves private addresses or `localhost`: it cannot see where DNS points. On Node, use
 * `nodeDidWebFetcher` from `@wmp/session/node`, which checks every address DNS answers.
 */
export function webDidFetcher(options: WebDidFetcherOptions = {}): DidDocumentFetcher {
  return async (url, { signal, maxBytes }) => {
    const host = url.hostname.toLowerCase();
    // `*.localhost` is refused too (RFC 6761 names it loopback), though only `localhost` counts as loopback.
    const local =
      isLoopbackHost(host) ||
      host.endsWith('.localhost') ||
      (ipLiteralOf(host) !== undefined && isPrivateAddress(host));
    if (local && !options.allowPrivateAddresses) throw new DidResolutionError('address_refused');
    let response: Response;
    try {
      response = await (options.fetch ?? globalThis.fetch)(url, {
        redirect: 'manual',
        signal,
        headers: { accept: 'application/did+json, application/json' },
      });
    } catch {
      throw new DidResolutionError(signal.aborted ? 'timeout' : 'network');
    }
    // A manual redirect is a 3xx in Node and an opaque (status 0) response in browsers.
    if (response.type === 'opaqueredirect' || (response.status >= 300 && response.status < 400)) {
      await response.body?.cancel().catch(() => undefined);
      throw new DidResolutionError('redirect');
    }
    const body = await readCappedBody(response, maxBytes, signal, (failure) => new DidResolutionError(failure));
    return { status: response.status, cacheControl: response.headers.get('cache-control'), body };
  };
}

/** A verification method as we use it: its absolute id and its public key as a JWK. */
export interface ResolvedKey {
  readonly id: string;
  /** The public key: `{kty: 'OKP', crv: 'Ed25519', x}` or `{kty: 'EC', crv: 'P-256', x, y}`. */
  readonly jwk: Readonly<JsonWebKey>;
  readonly alg: 'EdDSA' | 'ES256';
}

export type VerificationRelationship = 'authentication' | 'assertionMethod';

/** A DID document reduced to what key discovery needs (parsed and checked by `parseDidDocument`). */
export interface DidDocument {
  readonly id: string;
  readonly verificationMethod: readonly Readonly<Record<string, unknown>>[];
  readonly authentication: readonly (string | Readonly<Record<string, unknown>>)[];
  readonly assertionMethod: readonly (string | Readonly<Record<string, unknown>>)[];
  readonly service: readonly Readonly<Record<string, unknown>>[];
}

const MAX_METHODS = 64;

function listOf(value: unknown, strings: boolean): Array<string | Record<string, unknown>> {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length > MAX_METHODS) throw new DidResolutionError('invalid_document');
  for (const v of value) {
    const ok = (strings && typeof v === 'string') || (v !== null && typeof v === 'object' && !Array.isArray(v));
    if (!ok) throw new DidResolutionError('invalid_document');
  }
  return value as Array<string | Record<string, unknown>>;
}

/** Parses a DID document (strict JSON, bounded) whose `id` must be `did`. */
export function parseDidDocument(body: Uint8Array | string, did: string, maxBytes = 64 * 1024): DidDocument {
  let doc: unknown;
  try {
    doc = parseStrictJson(typeof body === 'string' ? body : fromUtf8(body), { maxBytes, maxDepth: 16 });
  } catch {
    throw new DidResolutionError('invalid_document');
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new DidResolutionError('invalid_document');
  const d = doc as Record<string, unknown>;
  if (d.id !== did) throw new DidResolutionError('invalid_document');
  return {
    id: did,
    verificationMethod: listOf(d.verificationMethod, false) as Record<string, unknown>[],
    authentication: listOf(d.authentication, true),
    assertionMethod: listOf(d.assertionMethod, true),
    service: listOf(d.service, false) as Record<string, unknown>[],
  };
}

function absolute(id: unknown, did: string): string | undefined {
  if (typeof id !== 'string') return undefined;
  return id.startsWith('#') ? `${did}${id}` : id;
}

function bytesOf(text: unknown, length: number): string {
  if (typeof text !== 'string') throw new DidResolutionError('invalid_document');
  let bytes: Uint8Array;
  try {
    bytes = b64urlDecode(text);
  } catch {
    throw new DidResolutionError('invalid_document');
  }
  if (bytes.length !== length) throw new DidResolutionError('invalid_document');
  return text;
}

/** The public key of one verification method: an Ed25519 or P-256 JWK, or an Ed25519 Multikey. */
function keyOf(method: Readonly<Record<string, unknown>>, id: string): ResolvedKey {
  const jwk = method.publicKeyJwk;
  if (jwk !== undefined) {
    if (jwk === null || typeof jwk !== 'object' || Array.isArray(jwk)) throw new DidResolutionError('invalid_document');
    const k = jwk as Record<string, unknown>;
    if ('d' in k) throw new DidResolutionError('invalid_document');
    if (k.kty === 'OKP' && k.crv === 'Ed25519') {
      return { id, alg: 'EdDSA', jwk: { kty: 'OKP', crv: 'Ed25519', x: bytesOf(k.x, 32) } };
    }
    if (k.kty === 'EC' && k.crv === 'P-256') {
      return { id, alg: 'ES256', jwk: { kty: 'EC', crv: 'P-256', x: bytesOf(k.x, 32), y: bytesOf(k.y, 32) } };
    }
    throw new DidResolutionError('unsupported_key');
  }
  if (typeof method.publicKeyMultibase === 'string') {
    if (method.type !== 'Multikey' && method.type !== 'Ed25519VerificationKey2020') {
      throw new DidResolutionError('unsupported_key');
    }
    try {
      const x = b64urlEncode(decodeEd25519Multikey(method.publicKeyMultibase));
      return { id, alg: 'EdDSA', jwk: { kty: 'OKP', crv: 'Ed25519', x } };
    } catch {
      throw new DidResolutionError('unsupported_key');
    }
  }
  throw new DidResolutionError('unsupported_key');
}

/**
 * The key a DID URL names in a document (core §7.5.4: locate the verificationMethod with the
 * matching id). With `relationship`, the method must also be listed under it (`authentication`
 * for signed challenges, `assertionMethod` for non-repudiation signatures). A method controlled
 * by another DID is not this DID's key.
 */
export function findVerificationKey(
  doc: DidDocument,
  kid: string,
  relationship?: VerificationRelationship,
): ResolvedKey {
  if (didPart(kid) !== doc.id || kid === doc.id) throw new DidResolutionError('unknown_key');
  const embedded = [...doc.authentication, ...doc.assertionMethod].filter(
    (m): m is Readonly<Record<string, unknown>> => typeof m === 'object',
  );
  const method = [...doc.verificationMethod, ...embedded].find((m) => absolute(m.id, doc.id) === kid);
  if (!method) throw new DidResolutionError('unknown_key');
  if (method.controller !== undefined && method.controller !== doc.id) throw new DidResolutionError('unknown_key');
  if (relationship) {
    const listed = doc[relationship].some((m) => absolute(typeof m === 'string' ? m : m.id, doc.id) === kid);
    if (!listed) throw new DidResolutionError('unknown_key');
  }
  return keyOf(method, kid);
}

export interface DidWebResolverOptions {
  /** How documents are fetched: `webDidFetcher()` in browsers, `nodeDidWebFetcher()` on Node. */
  readonly fetcher: DidDocumentFetcher;
  /** Per fetch, default 5000. */
  readonly timeoutMs?: number;
  /** Largest document, default 64 KiB. */
  readonly maxBytes?: number;
  /** Documents kept, default 1000 (expired ones go first, then the least recently used). */
  readonly maxEntries?: number;
  /** Longest a document is kept whatever its `max-age` says, default 3600 s. */
  readonly maxCacheSeconds?: number;
  /** Fetches in flight at once (one per DID), default 32; past it, `busy`. */
  readonly maxConcurrentFetches?: number;
  readonly now?: () => number;
}

/** How long a response may be reused: its `max-age`, none for `no-store` / `no-cache` / none given. */
export function freshnessSeconds(cacheControl: string | null): number {
  if (!cacheControl) return 0;
  let maxAge = 0;
  for (const part of cacheControl.toLowerCase().split(',')) {
    const directive = part.trim();
    if (directive === 'no-store' || directive === 'no-cache') return 0;
    const m = /^max-age\s*=\s*"?([0-9]{1,10})"?$/.exec(directive);
    if (m) maxAge = Number(m[1]);
  }
  return maxAge;
}

/**
 * Resolves did:web documents and the keys in them, with the limits above; documents are cached as
 * long as HTTP freshness allows (`Cache-Control: max-age`), capped, with a bounded number of
 * entries, and concurrent resolutions of one DID share one fetch.
 */
export class DidWebResolver {
  readonly #fetcher: DidDocumentFetcher;
  readonly #timeoutMs: number;
  readonly #maxBytes: number;
  readonly #maxCacheMs: number;
  readonly #maxConcurrent: number;
  readonly #now: () => number;
  readonly #cache: BoundedMap<string, { doc: DidDocument; expiresAt: number }>;
  readonly #inFlight = new Map<string, Promise<DidDocument>>();

  constructor(options: DidWebResolverOptions) {
    this.#fetcher = options.fetcher;
    this.#timeoutMs = options.timeoutMs ?? 5000;
    this.#maxBytes = options.maxBytes ?? 64 * 1024;
    this.#cache = new BoundedMap(Math.max(1, options.maxEntries ?? 1000));
    this.#maxCacheMs = (options.maxCacheSeconds ?? 3600) * 1000;
    this.#maxConcurrent = options.maxConcurrentFetches ?? 32;
    this.#now = options.now ?? Date.now;
  }

  /** Documents currently cached. */
  get size(): number {
    return this.#cache.size;
  }

  /** The document of `did` (a DID, not a DID URL). Throws `DidResolutionError`. */
  async resolve(did: string): Promise<DidDocument> {
    const url = didWebUrl(did);
    const now = this.#now();
    const hit = this.#cache.get(did);
    if (hit && hit.expiresAt > now) {
      this.#cache.delete(did);
      this.#cache.set(did, hit); // most recently used last
      return hit.doc;
    }
    if (hit) this.#cache.delete(did);
    const pending = this.#inFlight.get(did);
    if (pending) return pending;
    if (this.#inFlight.size >= this.#maxConcurrent) throw new DidResolutionError('busy');
    const fetching = this.#fetch(did, url).finally(() => this.#inFlight.delete(did));
    this.#inFlight.set(did, fetching);
    return fetching;
  }

  /** The key a DID URL names, listed under `relationship` when given. Throws `DidResolutionError`. */
  async resolveKey(kid: string, relationship?: VerificationRelationship): Promise<ResolvedKey> {
    if (typeof kid !== 'string' || !kid.includes('#')) throw new DidResolutionError('unknown_key');
    return findVerificationKey(await this.resolve(didPart(kid)), kid, relationship);
  }

  /**
   * A `KeyResolver` for @wmp/jcs-signing's Ed25519 signatures (`verifyMessage`, relay chains):
   * the raw key of a did:web `kid` listed under `assertionMethod`; undefined for anything else.
   */
  keyResolver(relationship: VerificationRelationship = 'assertionMethod'): KeyResolver {
    return {
      resolve: async (kid) => {
        if (typeof kid !== 'string' || !kid.startsWith('did:web:')) return undefined;
        try {
          const key = await this.resolveKey(kid, relationship);
          return key.alg === 'EdDSA' ? b64urlDecode(key.jwk.x as string) : undefined;
        } catch (e) {
          if (e instanceof DidResolutionError) return undefined;
          throw e;
        }
      },
    };
  }

  async #fetch(did: string, url: URL): Promise<DidDocument> {
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort();
        reject(new DidResolutionError('timeout'));
      }, this.#timeoutMs);
    });
    let response: DidFetchResponse;
    try {
      // The race also ends a fetcher that ignores its signal.
      response = await Promise.race([
        this.#fetcher(url, { signal: controller.signal, maxBytes: this.#maxBytes }),
        timeout,
      ]);
    } catch (e) {
      if (e instanceof DidResolutionError) throw e;
      throw new DidResolutionError(controller.signal.aborted ? 'timeout' : 'network');
    } finally {
      clearTimeout(timer);
      controller.abort();
    }
    if (response.status >= 300 && response.status < 400) throw new DidResolutionError('redirect');
    if (response.status !== 200) throw new DidResolutionError('http_status');
    if (response.body.byteLength > this.#maxBytes) throw new DidResolutionError('too_large');
    const doc = parseDidDocument(response.body, did, this.#maxBytes);
    const ttl = Math.min(freshnessSeconds(response.cacheControl) * 1000, this.#maxCacheMs);
    if (ttl > 0) this.#remember(did, doc, this.#now() + ttl);
    return doc;
  }

  #remember(did: string, doc: DidDocument, expiresAt: number): void {
    // Full: the expired go first; if none has, setting drops the least recently used.
    if (this.#cache.size >= this.#cache.maxSize) {
      const now = this.#now();
      for (const [key, entry] of this.#cache) if (entry.expiresAt <= now) this.#cache.delete(key);
    }
    this.#cache.set(did, { doc, expiresAt });
  }
}
