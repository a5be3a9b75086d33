import { BoundedSet } from '@wmp/jsonrpc-envelope';
import { Emitter, type Listener } from '../emitter.js';
import type { MessageProofs } from '../proofs/types.js';
import type { PeerMessage, PeerSessionEvents } from './types.js';

/** Message ids remembered per end-to-end session, so a redelivered message is handed over once. */
const SEEN_PER_SESSION = 1024;

/**
 * The events of one end-to-end session: messages deduplicated by their relay id and
 * acknowledged to the relay (it stored them for us) once the listeners are done.
 */
export class RoutedInbox {
  readonly #events: Emitter<PeerSessionEvents>;
  readonly #seen = new BoundedSet<string>(SEEN_PER_SESSION);
  readonly #ack: (messageId: string) => void;
  readonly #check: (params: Record<string, unknown>) => Promise<MessageProofs>;

  constructor(
    ack: (messageId: string) => void,
    report: (error: unknown) => void,
    check: (params: Record<string, unknown>) => Promise<MessageProofs>,
  ) {
    this.#ack = ack;
    this.#check = check;
    this.#events = new Emitter<PeerSessionEvents>((error) => report(error));
  }

  on<K extends keyof PeerSessionEvents>(event: K, listener: Listener<PeerSessionEvents[K]>): () => void {
    return this.#events.on(event, listener);
  }

  async message(params: Record<string, unknown>): Promise<void> {
    const wmp = (params.wmp ?? {}) as { message_id?: unknown; sender?: unknown };
    const id = typeof wmp.message_id === 'string' ? wmp.message_id : undefined;
    if (id !== undefined && this.#seen.has(id)) {
      this.#ack(id);
      return;
    }
    const proofs = await this.#check(params);
    const message: PeerMessage = {
      id,
      from: typeof wmp.sender === 'string' ? wmp.sender : undefined,
      contentType: typeof params.content_type === 'string' ? params.content_type : undefined,
      body: params.body,
      params,
      signature: proofs.signature,
      relayChain: proofs.relayChain,
      timestamp: proofs.timestamp,
    };
    await this.#events.emitAndWait('message', message);
    if (id === undefined) return;
    this.#seen.add(id);
    this.#ack(id);
  }

  notification(method: string, params: Record<string, unknown>): void {
    this.#events.emit('notification', { method, params });
  }

  closed(by: 'us' | 'peer'): void {
    this.#events.emit('closed', { by });
  }
}
