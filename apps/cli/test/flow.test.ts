// WMP flows from the command line against a responder that offers them (a wallet-like WmpServer
// over WebSocket on a real port: relays route messages and do not run flows): start with
// parameters, act across runs (the session is resumed from the home), wait, and the errors.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FlowManager, WmpServer } from '@wmp/session';
import { attachWebSocketServer, type WebSocketAttachment } from '@wmp/transports/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWmp, json, removeWmpBuild, runWmp, tempHomes } from './fixtures/wmp-process.js';

const homes = tempHomes();
let http: Server;
let ws: WebSocketAttachment;
let server: WmpServer;
let url: string;
const started: Record<string, unknown>[] = [];

/** `wmp --json flow …` from `home`. */
const jsonFlow = (home: string, ...args: string[]) => runWmp(['--home', home, '--json', 'flow', ...args]);
/** `wmp --json flow start approval` at the responder, with more arguments. */
const startApproval = (home: string, ...args: string[]) => jsonFlow(home, 'start', 'approval', '--relay', url, ...args);

beforeAll(async () => {
  // approval: progress on start, complete on approve, fail on reject, a progress step per comment.
  const flows = new FlowManager({
    types: {
      approval: {
        actions: { '*': ['approve', 'reject', 'comment'] },
        async onStart(params, control) {
          started.push(params);
          await control.progress('awaiting_review', { subject: params.subject });
        },
        async onAction(action, params, control) {
          if (action === 'approve') await control.complete({ approved: true, ...params });
          else if (action === 'reject') await control.fail('rejected');
          else await control.progress('commented', params);
        },
      },
    },
  });
  server = new WmpServer({ capabilities: { messaging: {}, flows: { max_concurrent: 8 } }, flows });
  http = createServer((_req, res) => res.writeHead(404).end());
  ws = attachWebSocketServer(http, { path: '/wmp', onTransport: (t) => void server.connect(t) });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  await buildWmp();
});
afterAll(async () => {
  await server?.close();
  await ws?.close();
  await new Promise<void>((r) => (http ? http.close(() => r()) : r()));
  homes.cleanup();
  removeWmpBuild();
});

describe('wmp flow', () => {
  it('start with parameters, comment and approve in later runs, and the refusals', async () => {
    const home = homes.make('alice');
    await runWmp(['--home', home, 'keys', 'new']);
    const start = await startApproval(
      home,
      '--param',
      'subject=Pay invoice 42',
      '--param',
      'amount=120',
      '--param',
      'urgent=true',
      '--id',
      'flow-42',
    );
    expect(start.code).toBe(0);
    expect(json(start)).toMatchObject({ flow_id: 'flow-42', type: 'approval', state: 'in_progress', relay: url });
    expect(started).toEqual([{ subject: 'Pay invoice 42', amount: 120, urgent: true }]);

    const comment = await jsonFlow(home, 'act', 'flow-42', 'comment', '--relay', url, '--param', 'text=ok');
    expect(comment.code).toBe(0);
    expect(json(comment)).toEqual({ flow_id: 'flow-42', action: 'comment', status: 'in_progress' });

    const approve = await runWmp(['--home', home, 'flow', 'act', 'flow-42', 'approve', '--relay', url]);
    expect(approve.code).toBe(0);
    expect(approve.stdout).toBe('approve on flow flow-42: completed\n');

    const again = await runWmp(['--home', home, 'flow', 'act', 'flow-42', 'approve', '--relay', url]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^wmp: the relay answered Flow error \(-31006: already_terminal\)\n/);
    const dance = await runWmp(['--home', home, 'flow', 'start', 'approval', '--relay', url, '--id', 'flow-43']);
    expect(dance.code).toBe(0);
    expect((await runWmp(['--home', home, 'flow', 'act', 'flow-43', 'dance', '--relay', url])).stderr).toContain(
      'invalid_action',
    );
    const unknown = await runWmp(['--home', home, 'flow', 'act', 'flow-nope', 'approve', '--relay', url]);
    expect(unknown.code).toBe(3);
    const bad = await runWmp(['--home', home, 'flow', 'start', 'approval', '--relay', url, '--param', 'no-equals']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--param "no-equals": give key=value');
    const cancelled = await jsonFlow(home, 'cancel', 'flow-43', '--relay', url);
    expect(json(cancelled)).toEqual({ flow_id: 'flow-43', state: 'cancelled' });
  });

  it('--wait shows the progress and the end of the flow (here its timeout)', async () => {
    const home = homes.make('bob');
    await runWmp(['--home', home, 'keys', 'new']);
    const waited = await startApproval(home, '--param', 'subject=x', '--wait', '--timeout', '1');
    expect(waited.code).toBe(1);
    expect(JSON.parse(waited.stdout.trim().split('\n')[0]!)).toMatchObject({
      type: 'flow_progress',
      step: 'awaiting_review',
      payload: { subject: 'x' },
    });
    expect(JSON.parse(waited.stderr).error).toMatchObject({
      code: 'failed',
      details: { wmp_code: -31006, reason: 'timeout' },
    });
  });
});
