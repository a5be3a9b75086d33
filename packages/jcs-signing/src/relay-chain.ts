import { type JsonRpcMessage, type RelayEntry, rfc3339, SignatureInvalidError } from '@wmp/jsonrpc-envelope';
import { b64urlEncode } from './bytes.js';
import { metadataOf, signedContentOf, withMetadata } from './content.js';
import { jcsBytes } from './jcs.js';
import { signDetached, verifyDetached } from './jws.js';
import { sha256 } from './keypair.js';
import { didKeyResolver, type KeyResolver } from './resolver.js';
import type { MessageSigner, X5cChainVerifier } from './x5c.js';

export const MAX_RELAY_HOPS = 64;

export interface RelayHop {
  /** The relay's endpoint URI. */
  readonly relay: string;
  /** The relay's identifier; its signing key's kid must belong to it. */
  readonly relayId: string;
  readonly signer: MessageSigner;
  /** RFC 3339; defaults to now. */
  readonly timestamp?: string;
  readonly serviceClass?: RelayEntry['service_class'];
  /**
   * Sign the entry (default true). core §5.7 makes a hop's signature a SHOULD unless the evidence
   * capability is active; a relay leaves it out where it proves nothing a recipient does not know
   * already (see `signOwnEntry` to sign it later, before the message leaves for another relay).
   */
  readonly sign?: boolean;
}

/**
 * Service classes that mean the evidence capability is active for the message (core §5.7): every
 * entry of such a chain must be signed, whatever `allowUnsigned` says.
 */
const EVIDENCE_CLASSES: ReadonlySet<unknown> = new Set(['registered', 'certified']);

/** Whether an entry of `chain` marks the message as under evidence (`service_class` registered or certified). */
export function chainUnderEvidence(chain: unknown): boolean {
  if (!Array.isArray(chain)) return false;
  for (const e of chain) {
    if (e !== null && typeof e === 'object' && EVIDENCE_CLASSES.has((e as RelayEntry).service_class)) return true;
  }
  return false;
}

/** The RFC 3339 time of this second, remembered for the second (a relay stamps every message). */
let stampSecond = Number.NaN;
let stamp = '';

function rfc3339Now(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== stampSecond) {
    stampSecond = second;
    stamp = rfc3339(now);
  }
  return stamp;
}

/** b64url(SHA-256(JCS(content))): binds every hop to the unchanged content. */
export function contentHash(message: JsonRpcMessage): string {
  return b64urlEncode(sha256(jcsBytes(signedContentOf(message))));
}

/** What a hop signs (core §5.7): the content hash, its own fields and the signatures before it. */
function hopPayload(hash: string, entry: RelayEntry, earlier: readonly RelayEntry[]): Uint8Array {
  const payload: Record<string, unknown> = {
    content_hash: hash,
    relay: entry.relay,
    relay_id: entry.relay_id,
    timestamp: entry.timestamp,
  };
  if (earlier.length > 0) payload.previous_chain = earlier.map((e) => e.signature ?? null);
  return jcsBytes(payload);
}

function chainOf(message: JsonRpcMessage): RelayEntry[] {
  const chain = metadataOf(message)?.relay_chain;
  if (chain === undefined) return [];
  if (!Array.isArray(chain)) throw new SignatureInvalidError({ reason: 'malformed' });
  return chain as RelayEntry[];
}

/**
 * `wmp.relay_chain` of `message` with this relay's signed entry appended, as a new array; the
 * message is not copied (a relay that builds the message itself sets the chain in place).
 */
export async function relayChainWith(message: JsonRpcMessage, hop: RelayHop): Promise<RelayEntry[]> {
  const earlier = chainOf(message);
  if (earlier.length >= MAX_RELAY_HOPS) throw new SignatureInvalidError({ reason: 'too_many_hops' });
  const unsigned: RelayEntry = {
    relay: hop.relay,
    relay_id: hop.relayId,
    timestamp: hop.timestamp ?? rfc3339Now(),
    ...(hop.serviceClass ? { service_class: hop.serviceClass } : {}),
  };
  if (hop.sign === false) return [...earlier, unsigned];
  const signature = await signDetached(hopPayload(contentHash(message), unsigned, earlier), hop.signer);
  return [...earlier, { ...unsigned, signature }];
}

/**
 * `wmp.relay_chain` of `message` with its last entry, this relay's own written unsigned
 * (`sign: false`), now signed by `hop.signer`, as a new array; the chain as it is when that entry
 * is signed already. Throws -31010 `malformed` when the last entry is not `hop.relayId`'s.
 */
export async function signOwnEntry(
  message: JsonRpcMessage,
  hop: Pick<RelayHop, 'relayId' | 'signer'>,
): Promise<RelayEntry[]> {
  const chain = chainOf(message);
  const own = chain.at(-1);
  if (own === null || typeof own !== 'object' || own.relay_id !== hop.relayId) {
    throw new SignatureInvalidError({ reason: 'malformed' });
  }
  if (own.signature !== undefined) return chain;
  const earlier = chain.slice(0, -1);
  const signature = await signDetached(hopPayload(contentHash(message), own, earlier), hop.signer);
  return [...earlier, { ...own, signature }];
}

/** Returns a copy of `message` with this relay's signed entry appended to `wmp.relay_chain`. */
export async function appendRelayEntry<M extends JsonRpcMessage>(message: M, hop: RelayHop): Promise<M> {
  const chain = await relayChainWith(message, hop);
  return withMetadata(message, (wmp) => ({ ...wmp, relay_chain: chain }));
}

export interface VerifyRelayChainOptions {
  readonly resolver?: KeyResolver;
  /** Checks the chains of hops signed with an `x5c` header (relays with X.509 identities). */
  readonly x5c?: X5cChainVerifier;
  /**
   * The relay this message came from. A chain proves the hops it holds; only this check catches
   * a last hop that was cut off.
   */
  readonly lastRelayId?: string;
  /**
   * Skip hops without a signature instead of refusing the chain (`missing`): core §5.7 makes the
   * entry's signature a SHOULD unless evidence is active. A later hop still signs them as `null`.
   * Never for a chain under evidence (an entry with `service_class` registered or certified:
   * `chainUnderEvidence`), whose every entry must be signed.
   */
  readonly allowUnsigned?: boolean;
}

/**
 * Verifies every hop of `wmp.relay_chain`: each signed by its `relay_id`, over the unchanged
 * content and every earlier signature, so a dropped, reordered or altered hop fails. Throws
 * `SignatureInvalidError` with `data.reason` and `data.hop` (the index that failed).
 */
export async function verifyRelayChain(
  message: JsonRpcMessage,
  options: VerifyRelayChainOptions = {},
): Promise<number> {
  const chain = chainOf(message);
  if (chain.length > MAX_RELAY_HOPS) throw new SignatureInvalidError({ reason: 'too_many_hops' });
  const hash = contentHash(message);
  const allowUnsigned = options.allowUnsigned === true && !chainUnderEvidence(chain);
  for (let hop = 0; hop < chain.length; hop++) {
    const entry = chain[hop]!;
    const isObject = typeof entry === 'object' && entry !== null;
    if (isObject && entry.signature === undefined && allowUnsigned) continue;
    if (!isObject || typeof entry.signature !== 'string') throw new SignatureInvalidError({ reason: 'missing', hop });
    try {
      await verifyDetached(entry.signature, hopPayload(hash, entry, chain.slice(0, hop)), {
        key: options.resolver ?? didKeyResolver,
        signer: entry.relay_id,
        ...(options.x5c ? { x5c: options.x5c } : {}),
      });
    } catch (e) {
      if (e instanceof SignatureInvalidError) {
        throw new SignatureInvalidError({ ...(e.data as Record<string, unknown>), hop });
      }
      throw e;
    }
  }
  if (options.lastRelayId !== undefined && chain.at(-1)?.relay_id !== options.lastRelayId) {
    throw new SignatureInvalidError({ reason: 'last_hop_mismatch', hop: chain.length - 1 });
  }
  return chain.length;
}
