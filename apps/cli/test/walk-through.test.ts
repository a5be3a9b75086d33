// The registered-delivery walk-through of the READMEs, as an operator and two users type it: the
// relay README's `wmp-relay` command (evidence on, a TSA) run as a real process with the test TSA,
// then the CLI README's commands, one wmp child process each, in order. The commands are read
// from the two README blocks and must equal the steps below, so the READMEs and this test cannot
// drift. What a user relies on is checked: Bob sees the notice, accepts it signed, and gets the
// message signed by Alice with a verified timestamp; Alice sees the relay's evidence as it comes;
// `wmp evidence` lists the same records for Alice and for Bob, each signed and timestamped.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../test-support/services/index.js';
import { startTestTsa, type TestTsa } from '../../../test-support/tsa/tsa-server.js';
import { type RelayProcess, startRelayProcess } from '../../relay/test/fixtures/relay-process.js';
import { shortDid } from '../src/commands/common.js';
import {
  buildWmp,
  json,
  REPO_ROOT,
  removeWmpBuild,
  runWmp,
  startWmp,
  type WmpProcess,
} from './fixtures/wmp-process.js';

/** The operator's command in apps/relay/README.md. */
const OPERATOR = [
  'npx wmp-relay --data-dir ./data --evidence on --evidence-retention P10Y --tsa-url https://tsa.example/tsr --tsa-anchors tsa-roots.pem',
];

/** Alice's and Bob's commands in apps/cli/README.md, in order. */
const USERS = [
  'wmp --home ~/.wmp-rd/alice keys new',
  'wmp --home ~/.wmp-rd/alice card publish --relay http://127.0.0.1:8080',
  'wmp --home ~/.wmp-rd/bob keys new',
  'wmp --home ~/.wmp-rd/bob card publish --relay http://127.0.0.1:8080',
  'wmp --home ~/.wmp-rd/bob listen --tsa-anchors tsa-roots.pem',
  'wmp --home ~/.wmp-rd/alice listen --evidence --tsa-anchors tsa-roots.pem',
  'wmp --home ~/.wmp-rd/alice send did:key:z6MkBob... the signed terms --evidence --consent consented_signed --subject contract --timestamp https://tsa.example/tsr --tsa-anchors tsa-roots.pem',
  'wmp --home ~/.wmp-rd/bob accept msg-... --content-hash <hash> --sign',
  'wmp --home ~/.wmp-rd/alice evidence msg-... --tsa-anchors tsa-roots.pem',
  'wmp --home ~/.wmp-rd/bob evidence msg-... --tsa-anchors tsa-roots.pem',
];

/**
 * The commands of the first sh block after `heading` in a README: comments dropped, lines
 * continued with a backslash joined, spaces collapsed.
 */
function readmeCommands(readme: string, heading: string): string[] {
  const text = readFileSync(join(REPO_ROOT, readme), 'utf8');
  const at = text.indexOf(heading);
  if (at < 0) throw new Error(`no "${heading}" in ${readme}`);
  const block = /```sh\n([\s\S]*?)```/.exec(text.slice(at))?.[1] ?? '';
  return block
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) =>
      l
        .replace(/\s+#.*$/, '')
        .replace(/\s+/g, ' ')
        .trim(),
    )
    .filter((l) => l !== '' && !l.startsWith('#'));
}

const HEADING = '## Registered delivery, step by step';

/** What the relay records of a consented_signed message accepted and taken at one relay (wmp-tables §9). */
const RECORDED = [
  'submission_accepted',
  'notification_sent',
  'acceptance_confirmed',
  'content_handover',
  'delivery_confirmed',
  'retrieval_confirmed',
];

const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

let tsa: TestTsa;
let relay: RelayProcess;
let dir: string;
/** What the README's placeholders stand for here. */
const values = new Map<string, string>();

/** A README command as argv, its placeholders replaced (the leading `wmp` dropped). */
function argv(command: string): string[] {
  const words = command.split(' ').slice(1);
  return words.map((w) => {
    for (const [placeholder, value] of values)
      if (w.startsWith(placeholder)) return value + w.slice(placeholder.length);
    return w;
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'wmp-walk-'));
  [tsa] = await Promise.all([startTestTsa(), buildWmp()]);
  const anchors = join(dir, 'tsa-roots.pem');
  writeFileSync(anchors, tsa.anchorsPem);
  const port = await freePort();
  values.set('~/.wmp-rd/', `${join(dir, 'homes')}/`);
  values.set('http://127.0.0.1:8080', `http://127.0.0.1:${port}`);
  values.set('https://tsa.example/tsr', tsa.url);
  values.set('tsa-roots.pem', anchors);
  values.set('./data', join(dir, 'data'));
  const [operator] = readmeCommands('apps/relay/README.md', HEADING);
  relay = await startRelayProcess([...argv(operator!).slice(1), '--port', String(port), '--log-level', 'warn'], {
    timeoutMs: 60_000,
  });
}, 120_000);
afterAll(async () => {
  relay?.child.kill('SIGTERM');
  await relay?.exited;
  await tsa?.close();
  removeWmpBuild();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the registered-delivery walk-through of the READMEs', () => {
  it('the READMEs show exactly the commands this test runs', () => {
    expect(readmeCommands('apps/relay/README.md', HEADING)).toEqual(OPERATOR);
    expect(readmeCommands('apps/cli/README.md', HEADING)).toEqual(USERS);
  });

  it('runs: Alice sends a consented, signed, timestamped message; Bob accepts; both fetch the evidence', async () => {
    const steps = [...USERS];
    const run = async (expected: string) => {
      const step = steps.shift();
      expect(step).toBe(expected);
      const result = await runWmp(argv(step!));
      expect(result.code, `${step}\n${result.stderr}`).toBe(0);
      return result;
    };
    const start = (expected: string): WmpProcess => {
      const step = steps.shift();
      expect(step).toBe(expected);
      return startWmp(argv(step!));
    };

    const aliceDid = /new identity (did:key:\S+)/.exec((await run(USERS[0]!)).stdout)![1]!;
    await run(USERS[1]!);
    const bobDid = /new identity (did:key:\S+)/.exec((await run(USERS[2]!)).stdout)![1]!;
    values.set('did:key:z6MkBob...', bobDid);
    await run(USERS[3]!);

    const bob = start(USERS[4]!);
    const alice = start(USERS[5]!);
    await Promise.all([bob.waitForStderr(/listening as/), alice.waitForStderr(/listening as/)]);
    try {
      const sent = await run(USERS[6]!);
      const messageId = /\(message (msg-\S+)\)/.exec(sent.stdout)![1]!;
      values.set('msg-...', messageId);
      expect(sent.stdout).toContain(`queued at ${relay.url} for ${shortDid(bobDid)}`);

      // Bob is shown the notice (who, the subject, the command that answers it), never the content.
      const notice = await bob.waitForStdout(
        /sent you a consented_signed message "contract" \(message (msg-\S+)\).*--content-hash (\S+) --sign/,
      );
      expect(notice[1]).toBe(messageId);
      expect(bob.stdout()).not.toContain('the signed terms');
      values.set('<hash>', notice[2]!);

      const accepted = await run(USERS[7]!);
      expect(accepted.stdout).toContain(`accepted message ${messageId}, signed (your receipt)`);
      const got = await bob.waitForStdout(/: the signed terms \((.*)\)$/m);
      expect(got[1]).toMatch(
        new RegExp(`^signed by ${literal(shortDid(aliceDid))}, timestamped \\d{4}-\\d\\d-\\d\\dT\\S+Z$`),
      );

      // Alice's evidence session gets each record as the relay makes it, and the statuses.
      const relayId = ((await (await fetch(`${relay.url}/health`)).json()) as { relay_id: string }).relay_id;
      const notified = () =>
        alice
          .stdout()
          .split('\n')
          .filter((l) => l.startsWith(`evidence ${messageId} `));
      await expect
        .poll(
          () =>
            notified()
              .map((l) => l.split(/\s+/)[3])
              .sort(),
          { timeout: 15_000 },
        )
        .toEqual([...RECORDED].sort());
      for (const line of notified()) expect(line).toContain(`(signature valid by ${shortDid(relayId)}, timestamped)`);
      await alice.waitForStdout(new RegExp(`message ${messageId} to ${literal(shortDid(bobDid))}: delivered`));

      // Both read the same records from the repository, each signed by the relay and timestamped.
      const printed = [await run(USERS[8]!), await run(USERS[9]!)].map((r) => r.stdout);
      expect(printed[1]).toBe(printed[0]);
      expect(printed[0]).toContain(`message  ${messageId} (${RECORDED.length} records at ${relay.url})`);
      for (const [i, home] of ['alice', 'bob'].entries()) {
        const step = argv(USERS[8 + i]!);
        const read = json(await runWmp([...step.slice(0, 2), '--json', ...step.slice(2)]));
        const records = read.records as {
          event_type: string;
          issuer: string;
          recipient: string | null;
          signature: { valid: boolean };
          timestamp: { valid: boolean } | null;
          record: { original_sender: string; original_message_id: string };
        }[];
        expect(records.map((r) => r.event_type).sort(), home).toEqual([...RECORDED].sort());
        for (const r of records) {
          expect(r).toMatchObject({ issuer: relayId, signature: { valid: true }, timestamp: { valid: true } });
          expect(r.record).toMatchObject({ original_sender: aliceDid, original_message_id: messageId });
          if (r.event_type !== 'submission_accepted') expect(r.recipient).toBe(bobDid);
        }
      }
      expect(steps).toEqual([]);
    } finally {
      bob.child.kill('SIGINT');
      alice.child.kill('SIGINT');
      await Promise.all([bob.ended(), alice.ended()]);
    }
  }, 60_000);
});
