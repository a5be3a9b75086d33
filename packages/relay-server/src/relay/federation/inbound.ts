import {
  chainUnderEvidence,
  type RelayHop,
  relayChainWith,
  verifyMessage,
  verifyRelayChain,
  WMP_SKEW_SECONDS,
} from '@wmp/jcs-signing';
import {
  CapabilityNotSupportedError,
  DelegationInvalidError,
  EvidenceRequiredError,
  InvalidParamsError,
  InvalidRequestError,
  type JsonRpcNotification,
  NotAuthorizedError,
  ParticipantNotFoundError,
  rfc3339,
  TimestampInvalidError,
  WmpError,
} from '@wmp/jsonrpc-envelope';
import type { Connection, DelegationVerifier, SessionRecord } from '@wmp/session';
import { type EvidenceWitness, settleRefused } from '../evidence/evidence-witness.js';
import { isReservedKey } from '../routing/held-keys.js';
import { type Router, registeredHop, routedResult } from '../routing/route.js';
import type { RoutedMessage } from '../routing/routed-message.js';
import { lifetimeOf, scheduledAt } from '../support/lifetime.js';
import type { RelayTimings } from '../support/limits.js';
import { copyMembers } from '../support/members.js';
import type { RefusalLog } from '../support/refusals.js';
import type { ResolvedRegistered } from '../support/registered.js';
import type { Federation } from './federation.js';

/** What taking a peer's forwarded message needs: federation itself, and routing beneath it. */
export interface InboundDeps {
  readonly federation: Federation;
  /** Delegated senders (core §3.3): verified as at the delegate's own relay; `false`: refused. */
  readonly delegation: DelegationVerifier | false;
  /** Scheduled delivery on or off (`deliver_after`). */
  readonly registered: Pick<ResolvedRegistered, 'scheduledDelivery'>;
  readonly router: Pick<Router, 'routeToRecipients'>;
  readonly timings: Pick<RelayTimings, 'maxMessageTtlSeconds' | 'messageTtlSeconds'>;
  readonly refusals: RefusalLog;
  /** This relay as a hop of relay_chain. */
  hop(): RelayHop;
  /** Messages a peer forwards under evidence: recorded here, or refused (-31009) when evidence is off. */
  readonly evidence: Pick<EvidenceWitness, 'open'> | undefined;
  now(): number;
}

/**
 * Most relay_chain entries a forwarded message may carry (docs/federation-profile.md, "Sender
 * binding across hops").
 */
export const MAX_FEDERATION_HOPS = 8;

type Wmp = Record<string, unknown>;
/** A forwarded message's session and routing hint: the peer's, not ours. */
const PEER_ONLY_WMP: ReadonlySet<string> = new Set(['session_id', 'forward_to']);

/** Who forwarded a message, on what, and the routed session it names here, if any. */
export interface ForwardedOn {
  /** The peer relay's relay_id (the identity its link authenticated). */
  readonly peerId: string;
  readonly connection: Connection;
  /** The session it came on (its id and version are in the answer). */
  readonly session: SessionRecord;
  /**
   * A session routed through the peer and us whose frame this is: what is routed keeps naming it,
   * and goes only to its other party (`recipient`).
   */
  readonly route?: { readonly id: string; readonly recipient: string };
}

/**
 * A `wmp.message.deliver` from a peer relay whose `wmp.sender` is one of the peer's users
 * (docs/federation-profile.md, core §8.7.3): taken only when the peer may speak for the sender
 * (`bindPeerSender`). Then it is routed like any message, the sender, message id and content
 * untouched, our signed entry appended. Every refusal is a typed error and nothing is queued.
 */
export async function acceptForwarded(
  s: InboundDeps,
  params: Record<string, unknown>,
  on: ForwardedOn,
): Promise<unknown> {
  return counted(s, () => accept(s, params, on));
}

/**
 * A `wmp.session.create` a peer relay passes on for one of its users (a session routed end to end
 * through both relays): bound as a forwarded deliver is (`bindPeerSender`). Resolves with the
 * peer's origin ('' for a relay of `open` mode) and the create as it goes on from here, our
 * signed entry appended to the chain as it came.
 */
export async function acceptForwardedCreate(
  s: InboundDeps,
  params: Record<string, unknown>,
  peerId: string,
): Promise<{ readonly origin: string; readonly offered: Record<string, unknown> }> {
  return counted(s, async () => {
    const message = { jsonrpc: '2.0' as const, method: 'wmp.session.create', params };
    const origin = await peerOrigin(s.federation, peerId);
    await bindPeerSender(s, message, peerId, origin);
    const wmp: Wmp = { ...(params.wmp as Wmp) };
    const offeredParams = copyMembers<Record<string, unknown>>({}, params);
    offeredParams.wmp = wmp;
    const offered: JsonRpcNotification = { jsonrpc: '2.0', method: message.method, params: offeredParams };
    wmp.relay_chain = await relayChainWith(offered, s.hop());
    return { origin, offered: offered.params as Record<string, unknown> };
  });
}

/** Runs an inbound check, counting a refusal by its reason. */
async function counted<T>(s: InboundDeps, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    const reason = e instanceof WmpError ? reasonOf(e) : 'internal';
    s.federation.metrics.refusedIn(reason);
    s.refusals.note(`federation_${reason}`);
    throw e;
  }
}

function reasonOf(e: WmpError): string {
  const reason = (e.data as { reason?: unknown } | undefined)?.reason;
  return typeof reason === 'string' ? reason : String(e.code);
}

/** The origin of the peer relay authenticated as `peerId` ('' in `open` mode); -31002 `not_a_peer` for anyone else. */
async function peerOrigin(federation: Federation, peerId: string): Promise<string> {
  const origin = await federation.peerOriginOf(peerId);
  if (origin === undefined) throw new NotAuthorizedError({ reason: 'not_a_peer' });
  return origin;
}

/**
 * Whether the peer may speak for the message's `wmp.sender` (core §8.7.3; docs/federation-profile.md,
 * "Sender binding across hops"): the chain holds no hop of ours and at most 8 hops, every hop's
 * time is within the message's life, its last entry is the peer's and every entry verifies, the
 * sender is not registered here now, and the peer may speak for the sender (the sender's own
 * `wmp.signature`, the peer is one of the sender's resolved homes, or the operator trusts it).
 */
async function bindPeerSender(
  s: InboundDeps,
  message: { jsonrpc: '2.0'; method: string; params: Record<string, unknown> },
  peerId: string,
  origin: string,
  submitter = (message.params.wmp as Wmp).sender as string,
): Promise<void> {
  const wmp = message.params.wmp as Wmp;
  checkChainShape(wmp.relay_chain, peerId, s.hop().relayId);
  checkChainTimes(wmp.relay_chain as Wmp[], wmp.expires_at, s);
  await verifyRelayChain(message, { lastRelayId: peerId });
  await checkSenderBinding(s.federation, message, submitter, origin);
}

async function accept(s: InboundDeps, params: Record<string, unknown>, on: ForwardedOn): Promise<unknown> {
  const { federation } = s;
  const { peerId, route } = on;
  const wmp = params.wmp as Wmp;
  const sender = wmp.sender as string;
  const origin = await peerOrigin(federation, peerId);
  const messageId = wmp.message_id;
  if (typeof messageId !== 'string' || messageId.length === 0 || messageId.length > 256 || messageId.includes('\n')) {
    throw new InvalidParamsError({ reason: 'message_id required' });
  }
  const message = { jsonrpc: '2.0' as const, method: 'wmp.message.deliver', params };
  // Who the peer speaks for: the sender, or the delegate that sent for it (whose delegation must hold here too).
  const submitter = await delegateOf(s, wmp, sender);
  await bindPeerSender(s, message, peerId, origin, submitter);
  const underEvidence = chainUnderEvidence(wmp.relay_chain);
  if (underEvidence && s.evidence === undefined) {
    throw new EvidenceRequiredError({ reason: 'evidence_unavailable' });
  }
  const recipients = recipientsOf(params, wmp);
  const stranger = route === undefined ? undefined : recipients.find((r) => r !== route.recipient);
  if (stranger !== undefined) throw new ParticipantNotFoundError({ participant: stranger });
  const now = s.now();
  const dueAt = scheduledAt(wmp as { deliver_after?: string }, s.registered.scheduledDelivery, s.timings, now);
  const expiresAt = expiryOf(wmp.expires_at, s, now, dueAt);

  // Ours appended to the chain as it came; the peer's session and its routing hint are its own,
  // but a routed session both relays know keeps its id.
  // Member by member, what spreads would write (decision 0733).
  const routedWmp = copyMembers<Wmp>({}, wmp, PEER_ONLY_WMP);
  if (route !== undefined) routedWmp.session_id = route.id;
  const routedParams = copyMembers<Record<string, unknown>>({}, params);
  routedParams.wmp = routedWmp;
  const routed: JsonRpcNotification = { jsonrpc: '2.0', method: 'wmp.message.deliver', params: routedParams };
  routedWmp.relay_chain = await relayChainWith(routed, underEvidence ? registeredHop(s.hop()) : s.hop());
  federation.learnReturnRoute(submitter, peerId);
  federation.metrics.accepted++;
  // Under evidence: the case opens before anything is stored (its records go back to the peer).
  const opened = underEvidence
    ? await s.evidence?.open({ message: routed, messageId, sender, recipients, expiresAt }, { peer: peerId })
    : undefined;
  let outcome: Awaited<ReturnType<typeof s.router.routeToRecipients>>;
  try {
    outcome = await s.router.routeToRecipients({
      sender: submitter,
      notify: true,
      connection: on.connection,
      messageId,
      expiresAt,
      group: route?.id,
      messages: new Map(recipients.map((r) => [r, routed as RoutedMessage])),
      isRequest: true,
      charge: (bytes) => federation.chargePeer(peerId, bytes),
      evidence: underEvidence,
    });
    if (outcome.accepted === 0 && outcome.full) throw outcome.full;
  } catch (e) {
    await settleRefused(opened, e);
    throw e;
  }
  await opened?.accepted();
  return routedResult(on.session, messageId);
}

/** Loops, hop count and the last hop, before any signature is checked (cheap refusals first). */
function checkChainShape(chain: unknown, peerId: string, ourId: string): void {
  if (!Array.isArray(chain) || chain.length === 0) throw new NotAuthorizedError({ reason: 'chain_not_from_peer' });
  if (chain.length > MAX_FEDERATION_HOPS) throw new InvalidRequestError({ reason: 'too_many_hops' });
  const ids = chain.map((e) => (e !== null && typeof e === 'object' ? (e as Wmp).relay_id : undefined));
  if (ids.includes(ourId)) throw new InvalidRequestError({ reason: 'relay_loop' });
  if (ids.at(-1) !== peerId) throw new NotAuthorizedError({ reason: 'chain_not_from_peer' });
}

/**
 * Every hop's `timestamp` within what the message's life allows: none later than now plus the
 * skew (core §8.5.1), none earlier than the message's age limit plus the skew (a message waits in
 * an outbox at most as long as it lives: our longest lifetime, or our default one for a message
 * that names no `expires_at`), and each hop no earlier than the one before it. -31011 with
 * `data.reason: relay_chain_timestamp` and the hop otherwise.
 */
function checkChainTimes(chain: readonly Wmp[], expiresAt: unknown, s: Pick<InboundDeps, 'timings' | 'now'>): void {
  const now = s.now();
  const skew = WMP_SKEW_SECONDS * 1000;
  const { maxMessageTtlSeconds, messageTtlSeconds } = s.timings;
  const ageLimit = (expiresAt === undefined ? messageTtlSeconds : maxMessageTtlSeconds) * 1000;
  let previous = Number.NEGATIVE_INFINITY;
  chain.forEach((entry, hop) => {
    const at = typeof entry.timestamp === 'string' ? Date.parse(entry.timestamp) : Number.NaN;
    if (Number.isNaN(at) || at > now + skew || at < now - ageLimit - skew || at < previous - skew) {
      throw new TimestampInvalidError({ reason: 'relay_chain_timestamp', hop, server_time: rfc3339(now) });
    }
    previous = at;
  });
}

/**
 * No claims for identities registered here now (on any node); and the peer speaks for the sender
 * only as a trusted peer, as one of the relays the sender is homed at (a card naming several
 * relays homes its owner at each: a forward from one of them is no spoof), or with the sender's own
 * signature on the message.
 */
async function checkSenderBinding(
  federation: Federation,
  message: { jsonrpc: '2.0'; method: string; params: Record<string, unknown> },
  sender: string,
  peerOrigin: string,
): Promise<void> {
  if (typeof sender !== 'string') throw new InvalidParamsError({ reason: 'sender required' });
  if (await federation.registeredHere(sender)) throw new NotAuthorizedError({ reason: 'sender_homed_here' });
  if (peerOrigin !== '') {
    if (federation.trusts(peerOrigin)) return;
    if ((await federation.resolve(sender)).relays.includes(peerOrigin)) return;
  }
  if ((message.params.wmp as Wmp).signature === undefined) {
    throw new NotAuthorizedError({ reason: 'peer_may_not_speak_for_sender' });
  }
  await verifyMessage(message, { required: true, signer: sender });
}

/**
 * The delegate a forwarded message was sent by (its statuses go back to it), once its
 * `sender_delegate` holds here as it did at the delegate's relay: a mandate by the sender, or a
 * presentation whose session binding that relay checked (-31015); the sender itself when the
 * message names no delegate. Delegation off here: -31005.
 */
async function delegateOf(s: InboundDeps, wmp: Wmp, sender: string): Promise<string> {
  const delegate = wmp.sender_delegate;
  if (delegate === undefined) return sender;
  if (s.delegation === false)
    throw new CapabilityNotSupportedError({ capability: 'erds', unsupported: ['delegation'] });
  const id = (delegate as { id?: unknown } | null)?.id;
  if (typeof id !== 'string' || id === sender) throw new DelegationInvalidError({ reason: 'principal_required' });
  await s.delegation.verify({
    principal: sender,
    delegate,
    authenticated: id,
    action: 'submit',
    binding: undefined,
    now: s.now(),
  });
  return id;
}

/** The recipients this hop delivers: `forward_to` (a part of `to`), else `to`. */
function recipientsOf(params: Record<string, unknown>, wmp: Wmp): string[] {
  const to = params.to;
  if (!Array.isArray(to) || to.length === 0) throw new InvalidParamsError({ reason: 'to required' });
  if (to.some((r) => typeof r !== 'string' || isReservedKey(r))) {
    throw new InvalidParamsError({ reason: 'to: not an identifier' });
  }
  const hint = wmp.forward_to;
  if (hint === undefined) return [...new Set(to as string[])];
  if (!Array.isArray(hint) || hint.length === 0 || !hint.every((r) => to.includes(r))) {
    throw new InvalidParamsError({ reason: 'forward_to must name recipients of to' });
  }
  return [...new Set(hint as string[])];
}

/** The message's `expires_at`, bounded by our longest lifetime; else our default (counted from `dueAt` when held for later). */
function expiryOf(
  expiresAt: unknown,
  s: Pick<InboundDeps, 'timings' | 'now'>,
  now: number,
  dueAt: number | undefined,
): number {
  if (expiresAt !== undefined && (typeof expiresAt !== 'string' || Number.isNaN(Date.parse(expiresAt)))) {
    throw new InvalidParamsError({ reason: 'expires_at has passed' });
  }
  return lifetimeOf(expiresAt as string | undefined, s.timings.messageTtlSeconds, s.timings, now, dueAt);
}
