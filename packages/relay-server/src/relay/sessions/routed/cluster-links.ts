import { b64urlEncode, randomBytes } from '@wmp/jcs-signing';
import type { JsonRpcErrorObject, JsonRpcNotification } from '@wmp/jsonrpc-envelope';
import { ConnectionClosedError, type ForwardedAnswer, RequestTimeoutError } from '@wmp/session';
import type { Coordination } from '../../../coordination/contracts/coordination.js';
import type { WakeUnsubscribe } from '../../../coordination/contracts/wake-ups.js';
import type { Logger } from '../../support/logger.js';
import { OFFLINE, type PartyAnswer, type PartyLinks } from './party-links.js';
import type { Party } from './route-record.js';

/** How long past the party's own deadline a node waits for another node's answer (the hop between them). */
const NODE_MARGIN_MS = 2_000;

/** What one node asks another, and what comes back, as JSON notes on the node's channel. */
type Ask =
  | { readonly t: 'offer'; readonly identity: string; readonly params: Record<string, unknown>; readonly ms: number }
  | { readonly t: 'req'; readonly party: Party; readonly method: string; readonly params: unknown; readonly ms: number }
  | { readonly t: 'note'; readonly party: Party; readonly message: JsonRpcNotification };

type Reply =
  | { readonly offline: true }
  | { readonly timeout: true }
  | { readonly result: unknown; readonly hop?: string }
  | { readonly error: JsonRpcErrorObject }
  | { readonly delivered: boolean };

interface Waiting {
  resolve(reply: Reply): void;
  timer: ReturnType<typeof setTimeout>;
}

export interface ClusterLinksOptions {
  readonly coordination: Coordination;
  /** The parties connected to this node. */
  readonly local: PartyLinks;
  /** Asks of this node waiting for another node's answer at once. */
  readonly maxWaiting: number;
  readonly logger: Logger;
}

/**
 * Routed frames between the nodes of a cluster (docs/architecture.md, "Cluster"): each node
 * listens on a channel of its own; a node that holds one party passes a frame to the nodes where
 * the other party is present, each of which passes it to its own connection of that party and
 * answers on the asking node's channel. Best effort as every note: a node that dies with a frame
 * unanswered costs the sender `peer_timeout`, never a wrong answer.
 */
export class ClusterPartyLinks implements PartyLinks {
  readonly #o: ClusterLinksOptions;
  readonly #waiting = new Map<string, Waiting>();
  readonly #prefix = `${b64urlEncode(randomBytes(6))}-`;
  #next = 0;
  #unsubscribe: WakeUnsubscribe | undefined;

  constructor(options: ClusterLinksOptions) {
    this.#o = options;
  }

  async start(): Promise<void> {
    const { coordination } = this.#o;
    this.#unsubscribe = await coordination.nodes.subscribe(coordination.nodeId, (_seq, note) => {
      if (note !== undefined) void this.#heard(note);
    });
  }

  stop(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    for (const w of this.#waiting.values()) {
      clearTimeout(w.timer);
      w.resolve({ offline: true });
    }
    this.#waiting.clear();
  }

  async offer(identity: string, params: Record<string, unknown>, timeoutMs: number) {
    for (const node of await this.#nodesOf(identity)) {
      const reply = await this.#ask(node, { t: 'offer', identity, params, ms: timeoutMs }, timeoutMs);
      if ('timeout' in reply) throw new RequestTimeoutError();
      if ('offline' in reply || 'delivered' in reply) continue;
      const answer: ForwardedAnswer = 'error' in reply ? { error: reply.error } : { result: reply.result };
      return { hop: 'hop' in reply && reply.hop !== undefined ? reply.hop : '', answer };
    }
    return undefined;
  }

  async request(party: Party, method: string, params: unknown, timeoutMs: number): Promise<PartyAnswer> {
    for (const node of await this.#nodesOf(reachedAs(party))) {
      const reply = await this.#ask(node, { t: 'req', party, method, params, ms: timeoutMs }, timeoutMs);
      if ('timeout' in reply) throw new RequestTimeoutError();
      if ('offline' in reply || 'delivered' in reply) continue;
      return 'error' in reply ? { error: reply.error } : { result: reply.result };
    }
    return OFFLINE;
  }

  async notify(party: Party, message: JsonRpcNotification): Promise<boolean> {
    for (const node of await this.#nodesOf(reachedAs(party))) {
      const reply = await this.#ask(node, { t: 'note', party, message }, NODE_MARGIN_MS);
      if ('delivered' in reply && reply.delivered) return true;
    }
    return false;
  }

  /** The other nodes where `identity` has connections (none when the directory cannot say, or nobody is to be reached). */
  async #nodesOf(identity: string | undefined): Promise<readonly string[]> {
    if (identity === undefined) return [];
    const { coordination } = this.#o;
    const nodes = await coordination.presence.nodesOf(identity).catch(() => [] as readonly string[]);
    return nodes.filter((n) => n !== coordination.nodeId);
  }

  #ask(node: string, ask: Ask, timeoutMs: number): Promise<Reply> {
    if (this.#waiting.size >= this.#o.maxWaiting) return Promise.resolve({ offline: true });
    const id = `${this.#prefix}${(this.#next++).toString(36)}`;
    return new Promise<Reply>((resolve) => {
      const timer = setTimeout(() => {
        this.#waiting.delete(id);
        resolve({ timeout: true });
      }, timeoutMs + NODE_MARGIN_MS);
      this.#waiting.set(id, { resolve, timer });
      const note = JSON.stringify({ c: id, from: this.#o.coordination.nodeId, ask });
      void this.#o.coordination.nodes.notify(node, note).then((reached) => {
        if (reached > 0) return;
        // Nobody listens there (the node died, or Redis is down): that node cannot answer.
        this.#settle(id, { offline: true });
      });
    });
  }

  #settle(id: string, reply: Reply): void {
    const waiting = this.#waiting.get(id);
    if (waiting === undefined) return;
    this.#waiting.delete(id);
    clearTimeout(waiting.timer);
    waiting.resolve(reply);
  }

  /** A note on this node's channel: another node's ask (answered on its channel), or an answer to ours. */
  async #heard(note: string): Promise<void> {
    let parsed: { c?: unknown; from?: unknown; ask?: Ask; reply?: Reply };
    try {
      parsed = JSON.parse(note) as typeof parsed;
    } catch {
      return;
    }
    if (typeof parsed.c !== 'string') return;
    if (parsed.reply !== undefined) {
      this.#settle(parsed.c, parsed.reply);
      return;
    }
    if (typeof parsed.from !== 'string' || parsed.ask === undefined) return;
    const reply = await this.#answer(parsed.ask).catch((e: unknown): Reply => {
      if (e instanceof RequestTimeoutError) return { timeout: true };
      if (!(e instanceof ConnectionClosedError)) {
        this.#o.logger.warn('relay.route_node_failed', { error: (e as { code?: string }).code ?? 'unknown' });
      }
      return { offline: true };
    });
    await this.#o.coordination.nodes.notify(parsed.from, JSON.stringify({ c: parsed.c, reply }));
  }

  /** Does what another node asked, with the parties connected here. */
  async #answer(ask: Ask): Promise<Reply> {
    const { local } = this.#o;
    if (ask.t === 'note') return { delivered: await local.notify(ask.party, ask.message) };
    if (ask.t === 'offer') {
      const offered = await local.offer(ask.identity, ask.params, ask.ms);
      if (offered === undefined) return { offline: true };
      if ('error' in offered.answer) return offered.answer;
      return { result: offered.answer.result, ...(offered.hop === undefined ? {} : { hop: offered.hop }) };
    }
    const answer = await local.request(ask.party, ask.method, ask.params, ask.ms);
    return answer;
  }
}

/**
 * Whose connection reaches a party: its own, or the link of the peer relay that offered the create
 * here; none for a party over our own link to a peer (every node has its own link).
 */
function reachedAs(party: Party): string | undefined {
  if (party.via === undefined) return party.id;
  return 'peer' in party.via ? party.via.peer : undefined;
}

/**
 * Links tried in order: the first that reaches the party answers (an offer: the first that had a
 * connection to offer it to).
 */
export function chainLinks(...links: readonly PartyLinks[]): PartyLinks {
  return {
    async offer(identity, params, timeoutMs) {
      for (const link of links) {
        const offered = await link.offer(identity, params, timeoutMs);
        if (offered !== undefined) return offered;
      }
      return undefined;
    },
    async request(party, method, params, timeoutMs) {
      for (const link of links) {
        const answer = await link.request(party, method, params, timeoutMs);
        if (!('offline' in answer)) return answer;
      }
      return OFFLINE;
    },
    async notify(party, message) {
      for (const link of links) if (await link.notify(party, message)) return true;
      return false;
    },
  };
}
