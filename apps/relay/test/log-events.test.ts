// What an operator reads in the log (docs/operations.md, "Logs"): a real `wmp-relay` process at
// debug level says when sessions open and close and when a login is refused, and no line of it
// names an identity or an address. The guide's table lists every event of the table in the code.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateKeypair } from '@wmp/jcs-signing';
import { OPS_EVENTS } from '@wmp/relay-server';
import { afterAll, describe, expect, it } from 'vitest';
import {
  authenticateRequest,
  createRequest,
  RawSocket,
} from '../../../packages/relay-server/test/fixtures/hostile-client.js';
import { waitFor } from '../../../test-support/wait-for.js';
import { REPO_ROOT, type RelayProcess, startRelayProcess } from './fixtures/relay-process.js';

const processes: RelayProcess[] = [];
afterAll(async () => {
  for (const p of processes) p.child.kill('SIGTERM');
  await Promise.all(processes.map((p) => p.exited));
});

interface Line {
  readonly event: string;
  readonly level: string;
  readonly [field: string]: unknown;
}

const linesOf = (relay: RelayProcess): Line[] =>
  relay
    .stderr()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Line);

describe('log events', { timeout: 60_000 }, () => {
  it('session opened and closed, a refused login: each once, at info, naming no identity or session', async () => {
    const relay = await startRelayProcess(['--ephemeral', '--port', '0', '--log-level', 'info'], {
      timeoutMs: 60_000,
    });
    processes.push(relay);
    const alice = generateKeypair();
    const mallory = generateKeypair();

    const socket = await RawSocket.open(relay.url);
    const login = await socket.login(alice);
    // A login with a signature by another key: refused.
    const created = await socket.call('wmp.session.create', createRequest(mallory.did).params);
    const sessionId = created.result.wmp.session_id as string;
    const forged = await authenticateRequest(alice, sessionId, created.result.challenge as string);
    const refused = await socket.call(forged.method, forged.params, forged.id);
    expect(refused.error).toBeDefined();
    socket.send({ jsonrpc: '2.0', method: 'wmp.session.close', params: { wmp: login.wmp, reason: 'complete' } });

    await waitFor(() => linesOf(relay).some((l) => l.event === 'session.closed'), 20_000, 'the close to be logged');
    const lines = linesOf(relay);
    const of = (event: string) => lines.filter((l) => l.event === event);
    expect(of('session.opened')).toEqual([expect.objectContaining({ level: 'info', kind: 'hop', scheme: 'did:key' })]);
    expect(of('auth.refused')).toEqual([
      expect.objectContaining({ level: 'info', method: 'wmp.session.authenticate', code: refused.error?.code }),
    ]);
    expect(of('session.closed')).toEqual([expect.objectContaining({ level: 'info', kind: 'hop' })]);
    // Mallory's session was never opened: its end (when it expires) is no event.
    const text = relay.stderr();
    for (const secret of [alice.did, mallory.did, sessionId, login.sessionId]) expect(text).not.toContain(secret);
  });

  it('docs/operations.md lists every event of the table, at its level', () => {
    const doc = readFileSync(join(REPO_ROOT, 'docs/operations.md'), 'utf8');
    for (const [event, level] of Object.entries(OPS_EVENTS))
      expect(doc, event).toMatch(new RegExp(`^\\| \`${event.replace('.', '\\.')}\` \\| ${level} \\|`, 'm'));
  });
});
