import type { Identity } from '../identity/identity.js';
import type { ClientStore } from '../store/store.js';
import { type BoxClient, MAX_IDS_PER_DELIVERED, type ServedEvent } from './box-client.js';
import { MailboxError } from './errors.js';
import { examineEvent, type MailMessage, type RejectedEvent } from './examine.js';
import { loadRelayState, type RelayState, saveRelayState } from './relay-state.js';
import { SeenSet } from './seen-set.js';

/** Where examined events go: accepted ones to the application (awaited), refused ones reported. */
export interface IntakeSink {
  message(message: MailMessage): void | Promise<void>;
  rejected(rejected: RejectedEvent): void;
}

export interface IntakeOptions {
  readonly identity: Identity;
  readonly store: ClientStore;
  readonly now: () => number;
  readonly skewSeconds: number;
  readonly maxEventBytes: number;
  readonly maxSeen: number;
}

/** Thrown out of `take` when the application's handler threw: its error, as `cause`. */
export class HandlerFailure {
  constructor(readonly cause: unknown) {}
}

/**
 * The receiving half of the mailbox, shared by `fetch` and `watch`: examines served events in seq
 * order, hands accepted ones to the application, then saves the dedupe set and the relay's cursor
 * with the ids to acknowledge, and only then acknowledges them with `POST /delivered`. A crash
 * before the save hands the same events over again (deduplicated if the set was saved); a failed
 * acknowledgement is retried on the next call. Callers hold the mailbox lock.
 */
export class Intake {
  #seen: SeenSet | undefined;

  constructor(private readonly options: IntakeOptions) {}

  async seen(): Promise<SeenSet> {
    this.#seen ??= await SeenSet.load(this.options.store, this.options.maxSeen);
    return this.#seen;
  }

  state(relay: string): Promise<RelayState> {
    return loadRelayState(this.options.store, relay);
  }

  /**
   * Takes `events` (ascending seq, all after the relay's cursor) from `client`'s relay; `next` is
   * where the cursor goes when all of them were taken. If the application's handler throws, the
   * events before it are committed, the cursor stops before it, and `HandlerFailure` is thrown.
   * Returns the acknowledgement's error, if it failed (it is retried later).
   */
  async take(
    client: BoxClient,
    events: readonly ServedEvent[],
    next: number,
    sink: IntakeSink,
    signal?: AbortSignal,
  ): Promise<MailboxError | undefined> {
    const { store, identity, skewSeconds, maxEventBytes } = this.options;
    const relay = client.origin;
    const seen = await this.seen();
    const state = await this.state(relay);
    const ack = [...state.ack];
    let after = state.after;
    let failure: HandlerFailure | undefined;
    const now = this.options.now();
    const context = { identity, seen, relay, now, skewSeconds, maxEventBytes };
    for (const served of events) {
      if (served.seq <= after) continue; // taken already (a stream replaying from an older cursor)
      const examined = examineEvent(served.value, context);
      if (examined.kind === 'accept') {
        try {
          await sink.message(examined.message);
        } catch (error) {
          failure = new HandlerFailure(error);
          break;
        }
      }
      if (examined.kind === 'reject') {
        sink.rejected(examined.rejected);
        // A refused event never opens; one refused for its time may be our clock's fault: leave it.
        if (examined.rejected.reason !== 'time' && examined.rejected.eventId) ack.push(examined.rejected.eventId);
      } else {
        seen.add(examined.seenKeys, examined.exp + skewSeconds * 1000);
        ack.push(examined.kind === 'accept' ? examined.message.eventId : examined.eventId);
      }
      after = served.seq;
    }
    if (failure === undefined) after = Math.max(after, next);
    seen.prune(now - skewSeconds * 1000);
    await seen.save(store);
    await saveRelayState(store, relay, { after, ack });
    const ackError = await this.flushAcks(client, signal);
    if (failure) throw failure;
    return ackError;
  }

  /** Sends the relay's pending acknowledgements; returns the box's error if that failed. */
  async flushAcks(client: BoxClient, signal?: AbortSignal): Promise<MailboxError | undefined> {
    const relay = client.origin;
    let state = await this.state(relay);
    while (state.ack.length > 0) {
      const batch = state.ack.slice(0, MAX_IDS_PER_DELIVERED);
      try {
        await client.delivered(batch, signal);
      } catch (error) {
        if (error instanceof MailboxError) return error;
        throw error;
      }
      state = { after: state.after, ack: state.ack.slice(batch.length) };
      await saveRelayState(this.options.store, relay, state);
    }
    return undefined;
  }
}
