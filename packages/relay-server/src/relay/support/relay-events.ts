import type { JsonRpcNotification, JsonRpcRequest } from '@wmp/jsonrpc-envelope';
import type { QueueRemoval } from '../../storage/contracts/queue-store.js';
import type { Endpoint } from './endpoint.js';
import type { WitnessedEvent } from './evidence-hooks.js';
import type { StatusParams } from './status-params.js';

/**
 * What one room of the relay tells a room above it (docs/architecture.md, "Relay"): every
 * notification that crosses the floor plan upwards. `createRelayCore` builds this object once,
 * each member calling the room that hears it; a room is given the members it raises (a `Pick`),
 * never the room that hears them. Some answer (how many nodes took a note): the raiser needs it.
 */
export interface RelayEvents {
  // Raised by presence.
  /** The first endpoint of `identity` on this node appeared: the queue wake-ups watch it. */
  identityUp(identity: string): void;
  /** The last endpoint of `identity` on this node went: the queue wake-ups stop watching it. */
  identityDown(identity: string): void;
  /** A connection that was not reachable (an HTTP session without a stream) is again: the forwarder pumps it. */
  reachableAgain(endpoint: Endpoint): void;

  // Raised by routing (the forwarder, the route, the queue wake-ups).
  /**
   * A message for `identity` was committed at `seq` (its stored text `body`, when the raiser has
   * it): the wake-ups tell the other nodes; resolves how many nodes woke.
   */
  committed(identity: string, seq: number, body?: string): Promise<number>;
  /** Settles once commits for `identity` anywhere wake this node (undefined: nothing to wait for); a pump waits first. */
  watching(identity: string): Promise<void> | undefined;
  /** Messages marked written to a live connection for the first time: their senders hear `delivered`. */
  delivered(marked: readonly QueueRemoval[]): void;
  /**
   * The forwarder would not write a message to a connection of `identity`: it authenticated below
   * the message's `recipient_assurance_level` (core §3.5.1). Its delivery fails (`failed`, a
   * `delivery_failed`): the status notifier takes it out of the queue and tells the sender.
   */
  handoverRefused(identity: string, failed: WitnessedEvent): void;
  /** A status a route gave rise to (`queued`, `dropped`): to the sender; kept for it when `keep`. */
  status(sender: string, params: StatusParams, keep: boolean): void;
  /** A message under evidence could not be queued for `recipient` (`dropped`): its evidence records that. */
  droppedUnderEvidence(sender: string, messageId: string, recipient: string, reason: string | undefined): void;
  /** Another node passed on `note` for `identity`, which has endpoints here (a status, or a session that ended). */
  noted(identity: string, note: string): void;

  // Raised by the sweeper.
  /** Messages left the queues unacknowledged at their expiry (`expired` went to their senders): evidence records it. */
  expired(removed: readonly QueueRemoval[]): void;

  // Raised by the status notifier.
  /**
   * A status for a sender reached through a peer relay goes back there (federation); true when
   * it took it.
   */
  statusToPeer(sender: string, params: StatusParams): boolean;
  /**
   * A status for a sender with no endpoint here goes to the nodes of the cluster where it has one
   * (they hear `noted`); resolves how many took it, or undefined on one process (nobody to ask).
   */
  statusElsewhere(sender: string, note: string): Promise<number> | undefined;
  /** Before a status is kept: one for a sender at home at a peer relay goes there (federation); true when it took it. */
  statusToHome(sender: string, params: StatusParams): Promise<boolean>;

  // Raised by federation (a peer link).
  /**
   * The peer at `origin` sent a frame of a session routed through it over our link to it: the
   * routed sessions pass it on; resolves with a request's result, or rejects with its error.
   */
  routedOverLink(origin: string, message: JsonRpcRequest | JsonRpcNotification): Promise<unknown>;
}
