import {
  decodeDetachedJws,
  didOf,
  jcsBytes,
  type KeyResolver,
  signedContentOf,
  verifyMessage,
  verifyRelayChain,
  type X5cChainVerifier,
} from '@wmp/jcs-signing';
import { type JsonRpcNotification, WmpError } from '@wmp/jsonrpc-envelope';
import type { TimestampTokenVerifier, TrustAnchors } from '@wmp/session';
import { isRecord, str } from '../json-values.js';
import { timestampVerifierOf, x5cVerifierOf } from './lazy-pki.js';
import type {
  MessageProofs,
  RelayChainCheck,
  RelayHopInfo,
  SignatureCheck,
  SignatureOptions,
  TimestampCheck,
} from './types.js';

export interface MessageChecksOptions {
  readonly signatures?: SignatureOptions;
  /** TSA anchors for received tokens. */
  readonly timestampAnchors?: TrustAnchors;
  /** Anchors of relays' X.509 certificates, for hops signed with `x5c`. */
  readonly relayAnchors?: TrustAnchors;
}

type Params = Record<string, unknown>;

/** `data.reason` and `data.detail` of a WMP error. */
function reasonOf(e: unknown): { reason?: string; detail?: string } {
  if (!(e instanceof WmpError)) throw e;
  const data = isRecord(e.data) ? e.data : {};
  const reason = str(data.reason);
  const detail = str(data.detail);
  return { ...(reason ? { reason } : {}), ...(detail ? { detail } : {}) };
}

function hopsOf(chain: unknown[]): RelayHopInfo[] {
  return chain.map((entry) => {
    const e = isRecord(entry) ? entry : {};
    return {
      relay: str(e.relay),
      relayId: str(e.relay_id),
      timestamp: str(e.timestamp),
      signed: typeof e.signature === 'string',
    };
  });
}

/** Most hops reported (verifyRelayChain refuses longer chains anyway). */
const MAX_REPORTED_HOPS = 64;

/**
 * The checks of every message handed to the application (core §5.4, §5.5, §5.7): its
 * non-repudiation signature (bound to `wmp.sender`), its relay chain (every signed hop, and the
 * last one the relay this client proved) and its timestamp token (against the TSA anchors). A
 * failure never drops the message: the application gets it with what held and what did not.
 */
export class MessageChecks {
  readonly #resolver: KeyResolver | undefined;
  readonly #signatureAnchors: TrustAnchors | undefined;
  readonly #relayAnchors: TrustAnchors | undefined;
  readonly #timestampAnchors: TrustAnchors | undefined;
  #senderChains: Promise<X5cChainVerifier> | undefined;
  #relayChains: Promise<X5cChainVerifier> | undefined;
  #tokens: Promise<TimestampTokenVerifier> | undefined;

  constructor(options: MessageChecksOptions = {}) {
    this.#resolver = options.signatures?.resolver;
    this.#signatureAnchors = options.signatures?.trustAnchors;
    this.#relayAnchors = options.relayAnchors;
    this.#timestampAnchors = options.timestampAnchors;
  }

  /** What the signature, relay chain and token of a received deliver say; `lastRelayId`: the relay that handed it over, if proven. */
  async check(params: Params, lastRelayId?: string): Promise<MessageProofs> {
    const message: JsonRpcNotification = { jsonrpc: '2.0', method: 'wmp.message.deliver', params };
    const wmp = isRecord(params.wmp) ? params.wmp : {};
    const [signature, relayChain, timestamp] = await Promise.all([
      wmp.signature === undefined ? undefined : this.#signature(message),
      wmp.relay_chain === undefined ? undefined : this.#relayChain(message, wmp.relay_chain, lastRelayId),
      wmp.timestamp_token === undefined ? undefined : this.#timestamp(message, wmp.timestamp_token),
    ]);
    return { signature, relayChain, timestamp };
  }

  async #signature(message: JsonRpcNotification): Promise<SignatureCheck> {
    let claimed: string | undefined;
    try {
      const wmp = (message.params as { wmp: { signature?: unknown; sender_delegate?: { id?: unknown } } }).wmp;
      const signature = wmp.signature;
      // A delegate's message (core §3.3) is signed by the delegate the relay checked, not by its principal.
      const delegate = typeof wmp.sender_delegate?.id === 'string' ? wmp.sender_delegate.id : undefined;
      // The header as claimed (unverified), to name the signer and to load X.509 only when needed.
      const { header } = decodeDetachedJws(signature as string);
      claimed = header.kid === undefined ? undefined : didOf(header.kid);
      const x5c = header.x5c === undefined ? undefined : await this.#senderVerifier();
      const verified = await verifyMessage(message, {
        ...(delegate ? { signer: delegate } : {}),
        ...(this.#resolver ? { resolver: this.#resolver } : {}),
        ...(x5c ? { x5c } : {}),
      });
      return { signer: verified!.signer, valid: true, alg: verified!.alg };
    } catch (e) {
      return { signer: claimed, valid: false, ...reasonOf(e) };
    }
  }

  /** The sender chain verifier, when anchors are set (loaded on first use). */
  #senderVerifier(): Promise<X5cChainVerifier> | undefined {
    if (this.#signatureAnchors === undefined) return undefined;
    this.#senderChains ??= x5cVerifierOf(this.#signatureAnchors, 'clientAuth');
    return this.#senderChains;
  }

  async #relayChain(
    message: JsonRpcNotification,
    chain: unknown,
    lastRelayId: string | undefined,
  ): Promise<RelayChainCheck> {
    if (!Array.isArray(chain)) return { hops: [], valid: false, reason: 'malformed' };
    const hops = hopsOf(chain.slice(0, MAX_REPORTED_HOPS));
    try {
      if (this.#relayAnchors !== undefined) this.#relayChains ??= x5cVerifierOf(this.#relayAnchors, 'serverAuth');
      const x5c = await this.#relayChains;
      await verifyRelayChain(message, {
        allowUnsigned: true,
        ...(this.#resolver ? { resolver: this.#resolver } : {}),
        ...(x5c ? { x5c } : {}),
        ...(lastRelayId ? { lastRelayId } : {}),
      });
      return { hops, valid: true };
    } catch (e) {
      const { reason } = reasonOf(e);
      const hop = (e as WmpError).data as { hop?: unknown } | undefined;
      return {
        hops,
        valid: false,
        ...(reason ? { reason } : {}),
        ...(typeof hop?.hop === 'number' ? { hop: hop.hop } : {}),
      };
    }
  }

  #timestamp(message: JsonRpcNotification, token: unknown): Promise<TimestampCheck> {
    return this.timestampOver(token, () => jcsBytes(signedContentOf(message)));
  }

  /** What an RFC 3161 token over `content` (the JCS bytes it must cover) says, against the TSA anchors. */
  async timestampOver(token: unknown, content: () => Uint8Array): Promise<TimestampCheck> {
    if (this.#timestampAnchors === undefined) return { time: undefined, valid: false, reason: 'no_anchors' };
    try {
      this.#tokens ??= timestampVerifierOf(this.#timestampAnchors);
      const verifier = await this.#tokens;
      const verified = await verifier.verify(String(token), content(), Date.now());
      return { time: new Date(verified.genTime), valid: true, tsa: verified.tsa };
    } catch (e) {
      if (!(e instanceof WmpError)) return { time: undefined, valid: false, reason: 'token_imprint' };
      return { time: undefined, valid: false, ...reasonOf(e) };
    }
  }
}
