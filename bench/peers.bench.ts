// relay-routing's load against the brokers a user would run instead (bench/servers/peer-brokers.ts,
// peer-loads.ts): Mosquitto 2 (MQTT QoS 1, persistent sessions) and NATS JetStream (file storage,
// a durable consumer per receiver, explicit acks), in rounds interleaved with the relay's own
// (SQLite store) in one run, on the same client machinery: 50 sender -> receiver pairs, 100
// connections, 8 messages in flight per sender, closed loop.
//
// Targets: the relay >= 1.0x NATS JetStream and >= 0.5x Mosquitto in the same run, and the relay's
// CPU per message <= 3 Ed25519 signs of this machine measured in the same rounds. Server CPU per
// message is each server process's CPU (/proc/<pid>/stat, every thread) over its measured rounds
// divided by the messages completed in them.
//
// The comparison is not like for like, and the report says so beside the figures: neither broker
// fsyncs before it acknowledges (Mosquitto writes its store on an autosave interval, JetStream
// fsyncs on an interval), while the relay acknowledges only what is fsynced, signs a relay_chain
// entry for each message and authenticates every sender (a signed challenge per connection, the
// sender bound to its session on every message). A relay message is complete at its `delivered`
// status (the receiver's ack came back through the relay); a broker's when its sender has the
// broker's ack and its receiver the message. Skipped with one line when a broker is not installed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuInSignsFigure, ed25519SignRate, signRateFigures } from './ed25519-rate.js';
import { type Benchmark, type BenchReport, type Figure, median } from './lib.js';
import { type BenchChild, startChild } from './servers/child.js';
import { missingBrokers, type PeerBroker, startBroker } from './servers/peer-brokers.js';
import { mosquittoFleet, natsFleet } from './servers/peer-loads.js';
import { procCpu } from './servers/process-stats.js';
import { closedLoop, type Fleet, PAIRS, relayFleet, WINDOW } from './servers/routing-load.js';

const ROUND_MS = 1500;
const ROUNDS = 4;
const WARMUP_MS = 600;

const RELAY_DURABILITY =
  'SQLite WAL, fsync before the message is acknowledged; relay_chain entries signed where they carry value (to a peer, under evidence); every sender authenticated';

interface Subject {
  readonly key: 'relay' | 'nats' | 'mosquitto';
  readonly label: string;
  readonly durability: string;
  readonly fleet: Fleet;
  /** CPU seconds the server process has used so far (every thread). */
  cpu(): Promise<number>;
  readonly rates: number[];
  cpuSeconds: number;
  messages: number;
}

async function measureRound(subject: Subject): Promise<void> {
  const cpuBefore = await subject.cpu();
  const before = subject.fleet.traffic.completed;
  subject.rates.push(await closedLoop(subject.fleet.traffic, ROUND_MS));
  subject.cpuSeconds += (await subject.cpu()) - cpuBefore;
  subject.messages += subject.fleet.traffic.completed - before;
}

const bench: Benchmark = {
  name: 'peers',
  async run(): Promise<BenchReport> {
    const missing = missingBrokers(['mosquitto', 'nats']);
    if (missing.length > 0) {
      return {
        name: 'peers',
        figures: [],
        skipped: `${missing.join(' and ')} not installed (apt-get install -y ${missing.join(' ')}; bench/README.md)`,
      };
    }
    const dir = mkdtempSync(join(tmpdir(), 'wmp-bench-peers-'));
    const limits = { requestsPerSecond: 1_000_000, requestBurst: 1_000_000 };
    let relay: BenchChild | undefined;
    const brokers: PeerBroker[] = [];
    const fleets: Fleet[] = [];
    try {
      relay = await startChild('relay-server.ts', ['sqlite', join(dir, 'relay.db'), JSON.stringify(limits)]);
      const mosquitto = await startBroker('mosquitto');
      brokers.push(mosquitto);
      const nats = await startBroker('nats');
      brokers.push(nats);
      const relayChild = relay;
      const subjects: Subject[] = [];
      const subject = (s: Omit<Subject, 'rates' | 'cpuSeconds' | 'messages'>) => {
        fleets.push(s.fleet);
        subjects.push({ ...s, rates: [], cpuSeconds: 0, messages: 0 });
      };
      subject({
        key: 'relay',
        label: 'WMP relay (SQLite store)',
        durability: RELAY_DURABILITY,
        fleet: await relayFleet(relay.port),
        cpu: async () => (await relayChild.ask('stats')).cpuMicros! / 1e6,
      });
      subject({
        key: 'nats',
        label: nats.label,
        durability: nats.durability,
        fleet: await natsFleet(nats.port),
        cpu: async () => procCpu(nats.pid),
      });
      subject({
        key: 'mosquitto',
        label: mosquitto.label,
        durability: mosquitto.durability,
        fleet: await mosquittoFleet(mosquitto.port),
        cpu: async () => procCpu(mosquitto.pid),
      });
      for (const s of subjects) await closedLoop(s.fleet.traffic, WARMUP_MS);

      const signs: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        signs.push(ed25519SignRate());
        // Each round starts with another subject, so none always follows the same neighbour.
        for (let k = 0; k < subjects.length; k++) await measureRound(subjects[(round + k) % subjects.length]!);
      }
      const signRate = median(signs);
      const [ours, natsSubject, mosquittoSubject] = subjects as [Subject, Subject, Subject];
      const rate = (s: Subject) => median(s.rates);
      const cpuPerMessage = (s: Subject) => (s.cpuSeconds * 1e6) / s.messages;
      const vsNats = rate(ours) / rate(natsSubject);
      const vsMosquitto = rate(ours) / rate(mosquittoSubject);
      const figures: Figure[] = [...signRateFigures(signRate)];
      for (const s of subjects) {
        figures.push({ name: `${s.label}: ${s.durability}`, value: rate(s), unit: 'msg/s' });
      }
      figures.push(
        { name: 'relay / NATS JetStream', value: vsNats, unit: 'x', target: '>= 1.0', met: vsNats >= 1 },
        { name: 'relay / Mosquitto', value: vsMosquitto, unit: 'x', target: '>= 0.5', met: vsMosquitto >= 0.5 },
      );
      for (const s of subjects) {
        figures.push({
          name: `${s.label} process CPU per message (measured rounds)`,
          value: cpuPerMessage(s),
          unit: 'µs',
        });
      }
      figures.push(cpuInSignsFigure(cpuPerMessage(ours), signRate));
      const stats = await relay.ask('stats');
      const rounds = Object.fromEntries(subjects.map((s) => [`rounds_${s.key}`, s.rates.map(Math.round).join(' ')]));
      const cpu = Object.fromEntries(
        subjects.map((s) => [`cpuMicrosPerMessage_${s.key}`, Math.round(cpuPerMessage(s) * 10) / 10]),
      );
      const durability = Object.fromEntries(subjects.map((s) => [`durability_${s.key}`, s.durability]));
      return {
        name: 'peers',
        figures,
        conditions: {
          pairs: PAIRS,
          inFlightPerSender: WINDOW,
          rounds: ROUNDS,
          roundMs: ROUND_MS,
          relayFrame: 'wmp.message.deliver notification (~940 bytes, body ~650), acked, delivered statuses',
          brokerPayload: 'the same body alone (~650 bytes)',
          mqtt: 'MQTT 3.1.1, QoS 1 publish and subscription, receivers clean: false',
          jetstream: 'file storage, work-queue retention, durable consumer per receiver, explicit ack, consume()',
          ed25519SignsPerSecond: Math.round(signRate),
          signRounds: signs.map(Math.round).join(' '),
          ...rounds,
          ...cpu,
          ...durability,
          relayErrors: stats.errors!,
          clientErrors: subjects.map((s) => s.fleet.traffic.errors).reduce((a, b) => a + b, 0),
        },
      };
    } finally {
      for (const f of fleets) f.close();
      await relay?.close();
      for (const b of brokers) await b.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

export default bench;
