// MLS application messages: encrypt + decrypt of a 100-byte payload through @wmp/mls-bridge
// (MlsGroup.encrypt/decrypt, and the full WMP construction encryptParams/decryptParams), against
// bare ts-mls calls doing the same work (createApplicationMessage, encode, decode, processMessage,
// zeroing the used-up keys) in the same run. Target: <= 1.2x the bare time (rate ratio >= 0.83).
// Plus a figure without target: the time to add the 50th member to a group.
import { generateKeypair } from '@wmp/jcs-signing';
import { MlsClient, MlsGroup } from '@wmp/mls-bridge';
import {
  type ClientConfig,
  type ClientState,
  createApplicationMessage,
  createCommit,
  createGroup,
  decodeMlsMessage,
  defaultKeyPackageEqualityConfig,
  defaultKeyRetentionConfig,
  defaultLifetimeConfig,
  defaultPaddingConfig,
  emptyPskIndex,
  encodeMlsMessage,
  generateKeyPackageWithKey,
  getCiphersuiteFromName,
  getCiphersuiteImpl,
  joinGroup,
  nobleCryptoProvider,
  processMessage,
  zeroOutUint8Array,
} from 'ts-mls';
import { type Benchmark, compareRates, type Figure, median } from './lib.js';

const PAYLOAD = new TextEncoder().encode('x'.repeat(100));
const TARGET_RATIO = 1 / 1.2;

/** Two members through the bridge. */
async function bridgePair(): Promise<[MlsGroup, MlsGroup]> {
  const alice = await MlsClient.create({ identity: generateKeypair() });
  const bob = await MlsClient.create({ identity: generateKeypair() });
  const a = await MlsGroup.create(alice);
  const add = await a.add((await bob.createKeyPackage()).keyPackage);
  await a.confirmCommit();
  return [a, await MlsGroup.join(bob, add.welcome!)];
}

/** The same two members with bare ts-mls (same suite, same provider, same key handling). */
async function barePair() {
  const cs = await getCiphersuiteImpl(
    getCiphersuiteFromName('MLS_128_DHKEMX25519_AES128GCM_SHA256_Ed25519'),
    nobleCryptoProvider,
  );
  const config: ClientConfig = {
    keyRetentionConfig: defaultKeyRetentionConfig,
    lifetimeConfig: defaultLifetimeConfig,
    keyPackageEqualityConfig: defaultKeyPackageEqualityConfig,
    paddingConfig: defaultPaddingConfig,
    authService: { validateCredential: async (c) => c.credentialType === 'basic' },
  };
  const caps = {
    versions: ['mls10' as const],
    ciphersuites: [cs.name],
    extensions: [],
    proposals: [],
    credentials: ['basic' as const],
  };
  const keyPackage = async () => {
    const k = generateKeypair();
    const now = BigInt(Math.floor(Date.now() / 1000));
    return generateKeyPackageWithKey(
      { credentialType: 'basic', identity: new TextEncoder().encode(k.did) },
      caps,
      { notBefore: now - 60n, notAfter: now + 3600n },
      [],
      { signKey: k.exportSeed(), publicKey: k.publicKey },
      cs,
    );
  };
  const ak = await keyPackage();
  const bk = await keyPackage();
  let alice: ClientState = await createGroup(
    crypto.getRandomValues(new Uint8Array(16)),
    ak.publicPackage,
    ak.privatePackage,
    [],
    cs,
    config,
  );
  const add = await createCommit(
    { state: alice, cipherSuite: cs },
    { extraProposals: [{ proposalType: 'add', add: { keyPackage: bk.publicPackage } }], ratchetTreeExtension: true },
  );
  alice = add.newState;
  let bob: ClientState = await joinGroup(
    add.welcome!,
    bk.publicPackage,
    bk.privatePackage,
    emptyPskIndex,
    cs,
    undefined,
    undefined,
    config,
  );

  return async () => {
    const out = await createApplicationMessage(alice, PAYLOAD, cs);
    alice = out.newState;
    for (const c of out.consumed) zeroOutUint8Array(c);
    const wire = encodeMlsMessage({
      version: 'mls10',
      wireformat: 'mls_private_message',
      privateMessage: out.privateMessage,
    });
    const msg = decodeMlsMessage(wire, 0)?.[0];
    if (msg?.wireformat !== 'mls_private_message') throw new Error('bare decode failed');
    const r = await processMessage(msg, bob, emptyPskIndex, () => 'accept', cs);
    bob = r.newState;
    for (const c of r.consumed) zeroOutUint8Array(c);
    if (r.kind !== 'applicationMessage' || r.message.length !== PAYLOAD.length) throw new Error('bare decrypt failed');
  };
}

/** Median milliseconds of `op` over `runs` runs, each after its own untimed `setup`. */
async function timed<T>(runs: number, setup: () => Promise<T>, op: (t: T) => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = await setup();
    const start = performance.now();
    await op(t);
    times.push(performance.now() - start);
  }
  return median(times);
}

/** Adding the 50th member to a 49-member group: the commit + Welcome, the join, a member's processing. */
async function fiftiethMember(): Promise<Figure[]> {
  const clients = await Promise.all(
    Array.from({ length: 49 }, () => MlsClient.create({ identity: generateKeypair() })),
  );
  const creator = await MlsGroup.create(clients[0]!);
  const kps = await Promise.all(clients.slice(1).map((c) => c.createKeyPackage()));
  const first = await creator.add(kps.map((k) => k.keyPackage));
  await creator.confirmCommit();
  const member = await MlsGroup.join(clients[1]!, first.welcome!);
  const creatorState = creator.save();
  const memberState = member.save();
  const runs = 5;

  let last: { commit: string; welcome: string; client: MlsClient } | undefined;
  const commitMs = await timed(
    runs,
    async () => {
      const client = await MlsClient.create({ identity: generateKeypair() });
      const kp = await client.createKeyPackage();
      return { group: await MlsGroup.restore(creatorState, clients[0]!), kp, client };
    },
    async ({ group, kp, client }) => {
      const r = await group.add(kp.keyPackage);
      await group.confirmCommit();
      last = { commit: r.commit, welcome: r.welcome!, client };
    },
  );
  const joinMs = await timed(
    1,
    async () => last!,
    (l) => MlsGroup.join(l.client, l.welcome),
  );
  const processMs = await timed(
    runs,
    async () => MlsGroup.restore(memberState, clients[1]!),
    (g) => g.process(last!.commit),
  );
  return [
    { name: 'add the 50th member: commit + Welcome (49-member group)', value: commitMs, unit: 'ms' },
    { name: 'the 50th member joins from the Welcome', value: joinMs, unit: 'ms' },
    { name: 'a member processes the commit adding the 50th', value: processMs, unit: 'ms' },
  ];
}

const bench: Benchmark = {
  name: 'mls-message',
  async run() {
    const [a, b] = await bridgePair();
    const bare = await barePair();
    const bytes = await compareRates(async () => {
      const m = await a.encrypt(PAYLOAD);
      await b.decrypt(m.ciphertext);
    }, bare);
    const params = {
      wmp: { version: '0.1', session_id: 'ses-bench', sender: a.identity },
      content_type: 'text/plain',
      body: 'x'.repeat(60),
    };
    const wmp = await compareRates(async () => {
      await b.decryptParams(await a.encryptParams(params));
    }, bare);
    const figures: Figure[] = [
      {
        name: 'MlsGroup.encrypt + decrypt (100 B)',
        value: bytes.subject,
        unit: 'ops/s',
        ratio: bytes.ratio,
        target: '>= 0.83 of baseline (<= 1.2x its time)',
        met: bytes.ratio >= TARGET_RATIO,
      },
      {
        name: 'encryptParams + decryptParams (WMP deliver, ~100 B content)',
        value: wmp.subject,
        unit: 'ops/s',
        ratio: wmp.ratio,
        target: '>= 0.83 of baseline (<= 1.2x its time)',
        met: wmp.ratio >= TARGET_RATIO,
      },
      ...(await fiftiethMember()),
    ];
    return {
      name: 'mls-message',
      baseline: { name: 'bare ts-mls encrypt + decrypt (100 B)', value: bytes.baseline, unit: 'ops/s' },
      figures,
    };
  },
};

export default bench;
