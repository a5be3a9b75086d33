// The relay-routing load on the peer brokers of bench/peers: 50 sender -> receiver pairs, one
// connection each (100 in all), the same ~650-byte body (bench/servers/routing-load.ts
// `bodyFrame`), the same closed loop and paced traffic. Each broker is driven as its users would
// drive it for durable store-and-forward:
// - Mosquitto: MQTT 3.1.1 (`mqtt` 5.x); every receiver has a persistent session (`clean: false`,
//   its own client id) subscribed at QoS 1 to its own topic, every sender publishes at QoS 1 and
//   counts the PUBACK; the receiver's client PUBACKs what it got.
// - NATS JetStream (`nats` 2.29): one stream on file storage (work-queue retention: a message
//   acknowledged by its consumer is removed, as an acked message leaves the relay's queue), one
//   durable consumer per receiver with explicit acks, pulled with `consume()`; senders
//   `await js.publish()` (the PubAck).
// A message is complete when its sender has the broker's acknowledgement and its receiver has the
// message (routing-load `BothSides`): the brokers send no delivery status.
import mqtt, { type MqttClient } from 'mqtt';
import { AckPolicy, connect, type JetStreamClient, type NatsConnection, RetentionPolicy, StorageType } from 'nats';
import { BothSides, bodyFrame, type Fleet, PAIRS, Traffic } from './routing-load.js';

type Body = { pair: number; t: number };

/** Opens `n` clients, ten at a time (as the relay fleet does its handshakes). */
async function openAll<T>(n: number, open: (i: number) => Promise<T>): Promise<T[]> {
  const all: T[] = [];
  for (let i = 0; i < n; i += 10) {
    all.push(...(await Promise.all(Array.from({ length: Math.min(10, n - i) }, (_, k) => open(i + k)))));
  }
  return all;
}

export async function mosquittoFleet(port: number): Promise<Fleet> {
  const url = `mqtt://127.0.0.1:${port}`;
  const base = { protocolVersion: 4 as const, reconnectPeriod: 0, keepalive: 60 };
  const run = Date.now().toString(36);
  const receivers = await openAll(PAIRS, async (pair) => {
    const client = await mqtt.connectAsync(url, { ...base, clientId: `bench-${run}-r${pair}`, clean: false });
    await client.subscribeAsync(`bench/r${pair}`, { qos: 1 });
    return client;
  });
  const senders = await openAll(PAIRS, (pair) =>
    mqtt.connectAsync(url, { ...base, clientId: `bench-${run}-s${pair}`, clean: true }),
  );
  let errors = 0;
  const sides: { current?: BothSides } = {};
  const frames = Array.from({ length: PAIRS }, (_, pair) => bodyFrame(pair));
  const traffic = new Traffic((pair, t) => {
    senders[pair]!.publish(`bench/r${pair}`, frames[pair]!(t), { qos: 1 }, (error) => {
      if (error) traffic.errors++;
      else sides.current!.acked(pair);
    });
  });
  sides.current = new BothSides(traffic);
  for (const receiver of receivers) {
    receiver.on('message', (_topic, payload) => {
      const body = JSON.parse(payload.toString('utf8')) as Body;
      sides.current!.received(body.pair, body.t);
    });
    receiver.on('error', () => errors++);
  }
  return {
    traffic,
    sample: () => undefined,
    close: () => {
      for (const c of [...senders, ...receivers] as MqttClient[]) c.end(true);
      traffic.errors += errors;
    },
  };
}

const STREAM = 'BENCH';

export async function natsFleet(port: number): Promise<Fleet> {
  const servers = `127.0.0.1:${port}`;
  const admin = await connect({ servers });
  const jsm = await admin.jetstreamManager();
  await jsm.streams.add({
    name: STREAM,
    subjects: ['bench.>'],
    storage: StorageType.File,
    retention: RetentionPolicy.Workqueue,
  });
  for (let pair = 0; pair < PAIRS; pair++) {
    await jsm.consumers.add(STREAM, {
      durable_name: `r${pair}`,
      filter_subject: `bench.r${pair}`,
      ack_policy: AckPolicy.Explicit,
      // Far above the 8 in flight per pair, as Mosquitto's max_inflight_messages 0.
      max_ack_pending: 10_000,
    });
  }
  const receivers = await openAll(PAIRS, () => connect({ servers }));
  const senders = await openAll(PAIRS, () => connect({ servers }));
  const publishers: JetStreamClient[] = senders.map((nc) => nc.jetstream());
  const sides: { current?: BothSides } = {};
  const encoder = new TextEncoder();
  const frames = Array.from({ length: PAIRS }, (_, pair) => bodyFrame(pair));
  const traffic = new Traffic((pair, t) => {
    publishers[pair]!.publish(`bench.r${pair}`, encoder.encode(frames[pair]!(t))).then(
      () => sides.current!.acked(pair),
      () => traffic.errors++,
    );
  });
  sides.current = new BothSides(traffic);
  const consuming: { stop(): void }[] = [];
  for (const [pair, nc] of receivers.entries()) {
    const consumer = await nc.jetstream().consumers.get(STREAM, `r${pair}`);
    const messages = await consumer.consume({ max_messages: 256 });
    consuming.push(messages);
    void (async () => {
      for await (const m of messages) {
        m.ack();
        const body = JSON.parse(m.string()) as Body;
        sides.current!.received(body.pair, body.t);
      }
    })().catch(() => {
      traffic.errors++;
    });
  }
  return {
    traffic,
    sample: () => undefined,
    close: () => {
      // A consumer's heartbeat timer would keep this process alive past its connection.
      for (const messages of consuming) messages.stop();
      for (const nc of [admin, ...senders, ...receivers] as NatsConnection[]) void nc.close();
    },
  };
}
