import { b64urlEncode } from '@wmp/jcs-signing';
import { WmpError } from '@wmp/jsonrpc-envelope';
import { type ParsedCertificate, parseTrustAnchors, type TrustAnchors } from '../auth/x509.js';
import { readCappedBody } from '../capped-body.js';
import type { TimestampTokenVerifier, VerifiedTimestampToken } from '../timestamp-tokens.js';
import { TsaClientError } from './failures.js';
import { newNonce, timestampQuery, tokenOfReply } from './query.js';
import { verifyTimestampToken } from './verify-token.js';

/** `fetch` as the client calls it (the global one by default). */
export type TsaFetch = (url: string, init: RequestInit) => Promise<Response>;

export interface TsaClientOptions {
  /** The TSA's HTTP endpoint (RFC 3161 §3.4: POST `application/timestamp-query`). */
  readonly url: string | URL;
  /** The anchors the TSA's certificate chains to: every token is verified before it is used. */
  readonly anchors: TrustAnchors;
  readonly fetch?: TsaFetch;
  /** Per request; default 10 s. */
  readonly timeoutMs?: number;
  /** Largest reply read; default 64 KiB. */
  readonly maxReplyBytes?: number;
  readonly now?: () => number;
}

/** A token obtained for some content: what goes in `wmp.timestamp_token`, and what it says. */
export interface ObtainedTimestampToken extends VerifiedTimestampToken {
  /** base64url DER of the TimeStampToken. */
  readonly token: string;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_REPLY_BYTES = 64 * 1024;
const REPLY_TYPE = 'application/timestamp-reply';

/** A verifier of `wmp.timestamp_token` for `WmpServer` (`timestampTokens`) or a receiving client. */
export function timestampVerifier(options: { readonly anchors: TrustAnchors }): TimestampTokenVerifier {
  const anchors = parseTrustAnchors(options.anchors);
  return { verify: (token, content, now) => verifyTimestampToken(token, content, anchors, now) };
}

/**
 * An RFC 3161 client of one TSA: `timestamp(content)` sends the SHA-256 of `content` (the JCS
 * bytes of a message's content) with a fresh nonce, reads the reply, and returns the token once
 * it answers that request and verifies against the anchors. Failures are `TsaClientError`s.
 * Browser-safe (fetch and WebCrypto). Anchors are parsed here, once: a bad one throws.
 */
export class TsaClient {
  readonly #url: string;
  readonly #anchors: readonly ParsedCertificate[];
  readonly #fetch: TsaFetch;
  readonly #timeoutMs: number;
  readonly #maxReplyBytes: number;
  readonly #now: () => number;

  constructor(options: TsaClientOptions) {
    this.#url = String(options.url);
    this.#anchors = parseTrustAnchors(options.anchors);
    // Called unbound: browsers throw "Illegal invocation" on fetch with another `this`.
    this.#fetch = options.fetch ?? ((url, init) => globalThis.fetch(url, init));
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#maxReplyBytes = options.maxReplyBytes ?? DEFAULT_MAX_REPLY_BYTES;
    this.#now = options.now ?? Date.now;
  }

  /** Verifies tokens against this client's anchors (for what it receives). */
  get verifier(): TimestampTokenVerifier {
    return { verify: (token, content, now) => verifyTimestampToken(token, content, this.#anchors, now) };
  }

  async timestamp(
    content: Uint8Array,
    options: { readonly signal?: AbortSignal } = {},
  ): Promise<ObtainedTimestampToken> {
    const imprint = new Uint8Array(await crypto.subtle.digest('SHA-256', content as Uint8Array<ArrayBuffer>));
    const nonce = newNonce();
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    let response: Response;
    try {
      response = await this.#fetch(this.#url, {
        method: 'POST',
        headers: { 'content-type': 'application/timestamp-query', accept: REPLY_TYPE },
        body: timestampQuery(imprint, nonce) as Uint8Array<ArrayBuffer>,
        signal,
        redirect: 'error',
      });
    } catch (e) {
      if (options.signal?.aborted) throw options.signal.reason;
      throw new TsaClientError('ERR_TSA_UNREACHABLE', { cause: e });
    }
    const type = response.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();
    if (response.status !== 200 || type !== REPLY_TYPE) {
      await response.body?.cancel().catch(() => undefined);
      throw new TsaClientError('ERR_TSA_HTTP', { status: response.status });
    }
    const reply = await readCappedBody(response, this.#maxReplyBytes, signal, (failure) =>
      failure === 'too_large'
        ? new TsaClientError('ERR_TSA_HTTP', { status: response.status })
        : new TsaClientError('ERR_TSA_UNREACHABLE'),
    );
    const token = b64urlEncode(tokenOfReply(reply, imprint, nonce));
    try {
      return { token, ...(await verifyTimestampToken(token, content, this.#anchors, this.#now())) };
    } catch (e) {
      if (e instanceof WmpError) throw new TsaClientError('ERR_TSA_TOKEN', { cause: e });
      throw e;
    }
  }
}
