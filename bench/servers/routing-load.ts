// The authenticated load of bench/relay-routing, shared with bench/relay-under-attack: 50 sender
// -> receiver pairs of registered relay clients (bench/servers/wmp-client.ts), closed-loop and
// paced traffic over them, and the same identities and frames on the bare `ws` forwarder.
// Receivers acknowledge what one event-loop turn brought, in one `wmp.message.ack`.
import { openClient, openSocket, type WmpClient } from './wmp-client.js';

export const PAIRS = 50;
/** Messages in flight per sender in the closed loop (until complete, see Traffic). */
export const WINDOW = 8;
const DRAIN_MS = 15_000;
const PACED_WARMUP_MS = 500;
const PACED_MS = 3000;
/** Most incomplete messages while pacing (one second at the paced rate). */
const PACED_MAX_BACKLOG = 5000;
/** Body padding: a deliver frame of about 940 bytes, a forwarded (relay-signed) one of about 1.45 KB. */
const PAD = 'x'.repeat(600);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Closed-loop and paced traffic over 50 sender -> receiver pairs. A message is received when it
 * reaches its receiver (latency is measured there) and complete when its sender may reuse the
 * slot: on the bare forwarder at receipt, through the relay when the sender gets `delivered`
 * (ack processed), so a round counts only messages whose whole cycle the relay finished.
 */
export class Traffic {
  readonly outstanding = new Int32Array(PAIRS);
  received = 0;
  completed = 0;
  errors = 0;
  closedLoop = false;
  samples: number[] | undefined;
  sampleFrom = Number.POSITIVE_INFINITY;
  readonly #send: (pair: number, t: number) => void;

  constructor(send: (pair: number, t: number) => void) {
    this.#send = send;
  }

  send(pair: number): void {
    this.outstanding[pair]!++;
    this.#send(pair, performance.now());
  }

  /** A receiver got a message stamped `t`. */
  receive(t: number): void {
    this.received++;
    if (this.samples && t >= this.sampleFrom) this.samples.push(performance.now() - t);
  }

  /** Pair `pair`'s oldest message is done: its slot is free again. */
  complete(pair: number): void {
    this.outstanding[pair]!--;
    this.completed++;
    if (this.closedLoop) this.send(pair);
  }

  inFlight(): number {
    return this.outstanding.reduce((a, b) => a + b, 0);
  }
}

/** Waits until every message sent is complete; one that never is fails the bench. */
export async function drain(traffic: Traffic): Promise<void> {
  const until = performance.now() + DRAIN_MS;
  while (traffic.inFlight() > 0) {
    if (performance.now() > until) {
      throw new Error(
        `${traffic.inFlight()} message(s) never completed (${traffic.received} received, ${traffic.errors} error frames)`,
      );
    }
    await sleep(5);
  }
}

/** Messages completed per second with WINDOW in flight per sender, over `ms`. */
export async function closedLoop(traffic: Traffic, ms: number): Promise<number> {
  traffic.closedLoop = true;
  const before = traffic.completed;
  const start = performance.now();
  for (let pair = 0; pair < PAIRS; pair++) for (let k = 0; k < WINDOW; k++) traffic.send(pair);
  await sleep(ms);
  const count = traffic.completed - before;
  const elapsed = performance.now() - start;
  traffic.closedLoop = false;
  await drain(traffic);
  return (count * 1000) / elapsed;
}

/**
 * Latencies (ms) of messages sent at `rate` per second, round robin over the senders, after a
 * warm-up. Open loop, except that no more than `maxBacklog` messages are left incomplete: a
 * server that cannot keep up gets fewer messages (`achieved` says how many per second), not a
 * backlog that outlives the bench.
 */
export async function paced(
  traffic: Traffic,
  rate: number,
  maxBacklog = PACED_MAX_BACKLOG,
): Promise<{ samples: number[]; achieved: number }> {
  const samples: number[] = [];
  const start = performance.now();
  traffic.samples = samples;
  traffic.sampleFrom = start + PACED_WARMUP_MS;
  const end = start + PACED_WARMUP_MS + PACED_MS;
  let due = 0;
  let measured = 0;
  let pair = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      for (const until = Math.floor(((Math.min(now, end) - start) * rate) / 1000); due < until; due++) {
        if (traffic.inFlight() >= maxBacklog) continue;
        traffic.send(pair);
        pair = (pair + 1) % PAIRS;
        if (now >= traffic.sampleFrom) measured++;
      }
      if (now >= end) resolve();
      else setTimeout(tick, 1);
    };
    tick();
  });
  await drain(traffic);
  traffic.samples = undefined;
  return { samples, achieved: (measured * 1000) / PACED_MS };
}

/** The deliver frame of `sender` to `to`, split around the send time it carries in its body. */
export function deliverFrame(sender: WmpClient['wmp'], to: string, pair: number): (t: number) => string {
  const head =
    `{"jsonrpc":"2.0","method":"wmp.message.deliver","params":{"wmp":${JSON.stringify(sender)},` +
    `"to":${JSON.stringify([to])},"content_type":"application/json","body":{"pair":${pair},"pad":"${PAD}","t":`;
  return (t) => `${head}${t}}}}`;
}

/**
 * The body of a deliver frame alone (about 650 bytes, the application's content), split around
 * the send time: what the peer brokers of bench/peers carry, which need no WMP envelope.
 */
export function bodyFrame(pair: number): (t: number) => string {
  const head = `{"pair":${pair},"pad":"${PAD}","t":`;
  return (t) => `${head}${t}}`;
}

/**
 * Completion on a broker without delivery statuses: a pair's message is complete once its sender
 * has the broker's acknowledgement and its receiver has it (both in order per pair), whichever
 * comes later, so a round counts only messages the broker both took and handed on.
 */
export class BothSides {
  readonly #acked = new Int32Array(PAIRS);
  readonly #received = new Int32Array(PAIRS);
  readonly #done = new Int32Array(PAIRS);
  readonly #traffic: Traffic;

  constructor(traffic: Traffic) {
    this.#traffic = traffic;
  }

  acked(pair: number): void {
    this.#acked[pair]!++;
    this.#settle(pair);
  }

  /** Pair `pair`'s receiver got the message stamped `t`. */
  received(pair: number, t: number): void {
    this.#traffic.receive(t);
    this.#received[pair]!++;
    this.#settle(pair);
  }

  #settle(pair: number): void {
    const both = Math.min(this.#acked[pair]!, this.#received[pair]!);
    while (this.#done[pair]! < both) {
      this.#done[pair]!++;
      this.#traffic.complete(pair);
    }
  }
}

type Body = { pair: number; t: number };
type Incoming = {
  method?: string;
  error?: unknown;
  params?: { body?: Body; status?: string; wmp?: { message_id?: string } };
};

export interface Fleet {
  readonly traffic: Traffic;
  /** A frame as the relay forwards (and stores) it, for the SQLite baseline's rows. */
  readonly sample: () => string | undefined;
  close(): void;
}

/** Opens `n` registered relay clients, a few handshakes at a time. */
export async function openClients(url: string, n: number, source?: (i: number) => string): Promise<WmpClient[]> {
  const clients: WmpClient[] = [];
  for (let i = 0; i < n; i += 10) {
    const batch = Array.from({ length: Math.min(10, n - i) }, (_, k) => openClient(url, undefined, source?.(i + k)));
    clients.push(...(await Promise.all(batch)));
  }
  return clients;
}

/**
 * 50 senders and 50 receivers on the relay; receivers ack what one turn brought, in one ack.
 *
 * With `ownSources`, every client connects from its own loopback address (127.1.0.1, 127.1.0.2,
 * ...), as users on different hosts do, so that per-source limits (`limitLoopback`) see 100
 * sources and not one.
 */
export async function relayFleet(
  port: number,
  options: { ownSources?: boolean; senderPort?: number } = {},
): Promise<Fleet & { senders: WmpClient[]; receivers: WmpClient[] }> {
  const url = (p: number) => `ws://127.0.0.1:${p}/wmp`;
  const source = options.ownSources ? (offset: number) => (i: number) => `127.1.0.${offset + i + 1}` : undefined;
  const receivers = await openClients(url(port), PAIRS, source?.(0));
  // With `senderPort`, the senders are on another node of a cluster (every message crosses nodes).
  const senders = await openClients(url(options.senderPort ?? port), PAIRS, source?.(PAIRS));
  const frames = senders.map((s, pair) => deliverFrame(s.wmp, receivers[pair]!.did, pair));
  const traffic = new Traffic((pair, t) => senders[pair]!.socket.send(frames[pair]!(t)));
  let sample: string | undefined;
  for (const receiver of receivers) {
    const ackHead = `{"jsonrpc":"2.0","method":"wmp.message.ack","params":{"wmp":${JSON.stringify(receiver.wmp)},"message_ids":`;
    const pending: string[] = [];
    const flush = () => {
      while (pending.length > 0)
        receiver.socket.send(`${ackHead}${JSON.stringify(pending.splice(0, 500))},"status":"received"}}`);
    };
    receiver.socket.on('message', (data) => {
      const text = String(data);
      const m = JSON.parse(text) as Incoming;
      if (m.method !== 'wmp.message.deliver') {
        if (m.error) traffic.errors++;
        return;
      }
      sample ??= text;
      if (pending.length === 0) setImmediate(flush);
      pending.push(m.params!.wmp!.message_id!);
      traffic.receive(m.params!.body!.t);
    });
  }
  for (const [pair, sender] of senders.entries()) {
    sender.socket.on('message', (data) => {
      const m = JSON.parse(String(data)) as Incoming;
      if (m.method === 'wmp.message.status' && m.params?.status === 'delivered') traffic.complete(pair);
      // `queued` is not terminal: across cluster nodes the sender's node says it before the
      // recipient's node writes the message (docs/decisions.md).
      else if (m.method === 'wmp.message.status' && m.params?.status === 'queued') return;
      else if (m.method === 'wmp.message.status' || m.error) {
        traffic.errors++;
        if (process.env.BENCH_DEBUG) console.error(String(data).slice(0, 300));
      }
    });
  }
  return {
    traffic,
    senders,
    receivers,
    sample: () => sample,
    close: () => {
      for (const c of [...senders, ...receivers]) c.socket.terminate();
    },
  };
}

/** The same identities, frames and client code on the bare forwarder (no handshake, no acks). */
export async function forwarderFleet(port: number, senders: WmpClient[], receivers: WmpClient[]): Promise<Fleet> {
  const open = (did: string) => openSocket(`ws://127.0.0.1:${port}/?id=${encodeURIComponent(did)}`);
  const rx = await Promise.all(receivers.map((r) => open(r.did)));
  const tx = await Promise.all(senders.map((s) => open(s.did)));
  const frames = senders.map((s, pair) => deliverFrame(s.wmp, receivers[pair]!.did, pair));
  const traffic = new Traffic((pair, t) => tx[pair]!.send(frames[pair]!(t)));
  for (const socket of rx) {
    socket.on('message', (data) => {
      const m = JSON.parse(String(data)) as Incoming;
      traffic.receive(m.params!.body!.t);
      traffic.complete(m.params!.body!.pair);
    });
  }
  return {
    traffic,
    sample: () => undefined,
    close: () => {
      for (const s of [...rx, ...tx]) s.terminate();
    },
  };
}
