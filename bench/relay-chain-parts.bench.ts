// The parts of a routed message's work that a profile of the relay cannot tell apart (inlining
// moves self time between them), each timed alone on one core on the message relay-routing routes
// (bench/servers/routing-load.ts: a ~940-byte deliver frame, a ~1.45 KB routed message): the
// strict parse and the schema check of the frame, the routed message's copies, the relay_chain
// entry part by part (JCS of the content, its SHA-256, JCS of the hop payload, the JWS signing
// input, the Ed25519 sign, the async signer around it), the stored text and the forward's
// serialisation, the status frame. What each planned cut of the relay's hot path would save is
// read from these and from the profile's stages (bench/results/targets.md). No target: the parts
// are reported in µs and in Ed25519 signs of the same run (bench/ed25519-rate.ts), rounds
// interleaved, medians kept. The code mirrors what the relay does per message today; the relay's
// own functions are used where a package exports them.
import { createPrivateKey, sign as cryptoSign, hash as oneShotHash } from 'node:crypto';
import {
  b64urlEncode,
  concatBytes,
  generateKeypair,
  jcs,
  jcsBytes,
  type RelayHop,
  relayChainWith,
  sha256,
  signDetached,
  signedContentOf,
  utf8,
} from '@wmp/jcs-signing';
import { coreMethods, type JsonRpcNotification, parseMessage, utf8Length } from '@wmp/jsonrpc-envelope';
import { ed25519SignRate, signRateFigures } from './ed25519-rate.js';
import { type Benchmark, type BenchReport, type Figure, median } from './lib.js';
import { deliverFrame } from './servers/routing-load.js';

const ROUNDS = 5;
const PART_MS = 150;

/** Kept so that no timed result is dead code to the optimiser. */
let sink: unknown;

/** CPU time (this process, user + system): a loaded machine stretches wall time, not the work. */
function cpuMicros(): number {
  const used = process.cpuUsage();
  return used.user + used.system;
}

/** CPU µs per call of `op`, over about PART_MS of wall time after a warm-up. */
function microsPerOp(op: () => unknown): number {
  for (let i = 0; i < 200; i++) sink = op();
  let n = 0;
  const start = performance.now();
  const cpu = cpuMicros();
  while (performance.now() - start < PART_MS) {
    for (let i = 0; i < 50; i++) sink = op();
    n += 50;
  }
  return (cpuMicros() - cpu) / n;
}

async function microsPerAsyncOp(op: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 200; i++) sink = await op();
  let n = 0;
  const start = performance.now();
  const cpu = cpuMicros();
  while (performance.now() - start < PART_MS) {
    for (let i = 0; i < 50; i++) sink = await op();
    n += 50;
  }
  return (cpuMicros() - cpu) / n;
}

type Obj = Record<string, unknown>;

/** The message as the relay's route builds it from the sender's params (the spreads included). */
function routedShape(params: Obj, sender: string, messageId: string): JsonRpcNotification {
  const { wmp = {}, ...content } = params as { wmp?: Obj };
  const { session_id: _ignored, relay_chain: _claimed, ...meta } = wmp;
  const routedWmp: Obj = { ...meta, sender, message_id: messageId };
  return { jsonrpc: '2.0', method: 'wmp.message.deliver', params: { ...content, wmp: routedWmp } };
}

const bench: Benchmark = {
  name: 'relay-chain-parts',
  async run(): Promise<BenchReport> {
    const client = generateKeypair();
    const relayKey = generateKeypair();
    const recipient = generateKeypair().did;
    const sessionId = `ses-${'A1b2C3d4E5f6G7h8I9j0Kl'}`;
    const hopSession = `ses-${'Z9y8X7w6V5u4T3s2R1q0Po'}`;
    const messageId = `msg-${'0'.repeat(14)}k2j4h5g6`;
    const frame = deliverFrame(
      { version: '0.1', session_id: sessionId, sender: client.did },
      recipient,
      7,
    )(performance.now());
    const hop: RelayHop = { relay: 'ws://127.0.0.1:40411/wmp', relayId: relayKey.did, signer: relayKey };
    const parsed = parseMessage(frame);
    if (parsed.kind !== 'message' || !('method' in parsed.message)) throw new Error('the frame did not parse');
    const params = parsed.message.params as Obj;
    const routed = routedShape(params, client.did, messageId);
    (routed.params as Obj & { wmp: Obj }).wmp.relay_chain = await relayChainWith(routed, hop);
    const storedText = JSON.stringify(routed);
    const content = signedContentOf(routed);
    const contentJcs = jcs(content);
    const hash = b64urlEncode(sha256(utf8(contentJcs)));
    const unsigned = { relay: hop.relay, relay_id: hop.relayId, timestamp: '2026-12-01T23:59:59Z' };
    const hopPayload = () => jcsBytes({ content_hash: hash, ...unsigned });
    const payload = hopPayload();
    const header = (await signDetached(payload, relayKey)).split('..')[0]!;
    const input = concatBytes(utf8(`${header}.`), payload);
    const signature = relayKey.sign(input);
    const fresh = () => routedShape(params, client.did, messageId);
    const contentBytes = utf8(contentJcs);
    const seed = relayKey.exportSeed();
    // PKCS#8 DER of the seed: imported once, accepted by every Node version.
    const pkcs8 = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]);
    const rawKey = createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' });
    pkcs8.fill(0);
    seed.fill(0);
    const status = {
      wmp: { version: '0.1', session_id: hopSession },
      message_id: messageId,
      status: 'delivered',
      recipient,
    };

    // Each part: [name, sync op] or [name, async op]. Sync ones are timed in a tight loop.
    const parts: [string, () => unknown, boolean][] = [
      ['parse: parseMessage (strict JSON) of the deliver frame', () => parseMessage(frame), false],
      ['parse: JSON.parse of the same frame (reference)', () => JSON.parse(frame), false],
      [
        'validation: validateParams(wmp.message.deliver) of its params',
        () => coreMethods.validateParams('wmp.message.deliver', params),
        false,
      ],
      ['copies: the routed message built from the params (spreads)', fresh, false],
      ['content: signedContentOf (params without wmp, a copy)', () => signedContentOf(routed), false],
      ['content hash: JCS of the content', () => jcs(content), false],
      ['content hash: UTF-8 + SHA-256 + base64url of that JCS', () => b64urlEncode(sha256(utf8(contentJcs))), false],
      ['content hash: UTF-8 of the JCS alone', () => utf8(contentJcs), false],
      ['content hash: SHA-256 alone (createHash, as sha256())', () => sha256(contentBytes), false],
      [
        'content hash: SHA-256 alone (crypto.hash one-shot, reference)',
        () => oneShotHash('sha256', contentBytes, 'buffer'),
        false,
      ],
      ['hop payload: built and JCS + UTF-8', hopPayload, false],
      ['JWS: signing input (header UTF-8 + concat)', () => concatBytes(utf8(`${header}.`), payload), false],
      ['JWS: Ed25519 sign (node:crypto, imported key)', () => relayKey.sign(input), false],
      ['JWS: crypto.sign alone (no copy into a Uint8Array, reference)', () => cryptoSign(null, input, rawKey), false],
      ['JWS: base64url of the signature + compact form', () => `${header}..${b64urlEncode(signature)}`, false],
      ['JWS: signDetached (awaited: the async signer)', () => signDetached(payload, relayKey), true],
      ['relay_chain: relayChainWith, the whole entry (awaited)', () => relayChainWith(fresh(), hop), true],
      ['store: JSON.stringify of the routed message (stored text)', () => JSON.stringify(routed), false],
      ['store: utf8Length of the stored text', () => utf8Length(storedText), false],
      [
        'forward: hop params copy + JSON.stringify (the live send)',
        () => {
          const p = routed.params as Obj & { wmp: Obj };
          return JSON.stringify({
            jsonrpc: '2.0',
            method: routed.method,
            params: { ...p, wmp: { ...p.wmp, session_id: hopSession } },
          });
        },
        false,
      ],
      ['forward: JSON.parse of the stored text (a catching-up read)', () => JSON.parse(storedText), false],
      [
        'status: a delivered status frame built and stringified',
        () => JSON.stringify({ jsonrpc: '2.0', method: 'wmp.message.status', params: { ...status } }),
        false,
      ],
    ];
    const times = parts.map(() => [] as number[]);
    const signs: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      signs.push(ed25519SignRate());
      for (const [i, [, op, async]] of parts.entries()) {
        times[i]!.push(async ? await microsPerAsyncOp(op as () => Promise<unknown>) : microsPerOp(op));
      }
    }
    void sink;
    const signRate = median(signs);
    const signMicros = 1e6 / signRate;
    const figures: Figure[] = [...signRateFigures(signRate)];
    for (const [i, [name]] of parts.entries()) {
      const micros = median(times[i]!);
      figures.push({ name: `${name} (${(micros / signMicros).toFixed(3)} signs)`, value: micros, unit: 'µs' });
    }
    return {
      name: 'relay-chain-parts',
      figures,
      conditions: {
        rounds: ROUNDS,
        msPerPart: PART_MS,
        deliverFrameBytes: utf8Length(frame),
        storedTextBytes: utf8Length(storedText),
        contentJcsBytes: utf8Length(contentJcs),
        hopPayloadBytes: payload.length,
        signingInputBytes: input.length,
        ed25519SignsPerSecond: Math.round(signRate),
        signRounds: signs.map(Math.round).join(' '),
      },
    };
  },
};

export default bench;
