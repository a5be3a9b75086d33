// The relay hosts sessions but runs no flows (it does not negotiate `flows`): flows are between
// an initiator and a responder. These tests run them against a WmpServer directly, over
// WebSocket, with two WmpClients in one session (a group session at that server).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FlowError } from '@wmp/jsonrpc-envelope';
import { FlowManager, WmpServer } from '@wmp/session';
import { attachWebSocketServer } from '@wmp/transports/node';
import { afterEach, describe, expect, it } from 'vitest';
import { ConnectionClosedError, type FlowEvent } from '../src/node.js';
import { clientTestbed, waitFor } from './client-testbed.js';

const bed = clientTestbed();
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A responder with an approval flow: it asks for review, then completes or fails on the action. */
async function responder(): Promise<{ url: string; server: WmpServer }> {
  const flows = new FlowManager({
    types: {
      approval: {
        actions: { awaiting_review: ['approve', 'reject'] },
        onStart: (_params, flow) => flow.progress('awaiting_review', { amount: 42 }),
        onAction: (action, _params, flow) =>
          action === 'approve' ? flow.complete({ approved: true }) : flow.fail('rejected'),
      },
    },
  });
  const server = new WmpServer({ flows, capabilities: { messaging: {}, flows: { max_concurrent: 8 } } });
  // A method that never answers, to have a call pending when the client closes.
  server.handle('wmp.message.poll', () => new Promise(() => undefined));
  const http: Server = createServer((_req, res) => res.writeHead(404).end());
  const ws = attachWebSocketServer(http, { path: '/wmp', onTransport: (t) => void server.connect(t) });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', () => r()));
  closers.push(async () => {
    await server.close();
    await ws.close();
    await new Promise<void>((r) => http.close(() => r()));
  });
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`, server };
}

describe('flows (against a WmpServer: the relay runs none)', () => {
  it('start, observe, act, cancel and fail, between two clients in one session', async () => {
    const { url } = await responder();
    const alice = await bed.client(url);
    const bob = await bed.client(url);
    // No relay capability here: nothing was registered.
    expect(alice.client.capabilities).toMatchObject({ messaging: {}, flows: { max_concurrent: 8 } });
    expect('relay' in alice.client.capabilities).toBe(false);

    const session = await alice.client.createGroup([bob.identity.did]);
    const bobSession = await bob.client.joinGroup(session.id);
    const seenByBob: FlowEvent[] = [];
    bob.client.on('flow', (e) => {
      seenByBob.push(e);
    });

    // Alice starts; both see the progress; Bob approves; both see the end.
    const steps: string[] = [];
    const flow = await session.startFlow(
      'approval',
      { subject: 'Pay invoice 42' },
      { onProgress: (s) => steps.push(s) },
    );
    expect(flow).toMatchObject({ type: 'approval', sessionId: session.id });
    expect(flow.id).toMatch(/^flow-/);
    await waitFor(() => seenByBob.length === 1);
    expect(seenByBob[0]).toMatchObject({
      sessionId: session.id,
      flowId: flow.id,
      kind: 'progress',
      step: 'awaiting_review',
      payload: { amount: 42 },
    });
    await waitFor(() => flow.step === 'awaiting_review');
    expect(steps).toEqual(['awaiting_review']);
    await expect(bobSession.actOnFlow(flow.id, 'approve')).resolves.toEqual({
      flowId: flow.id,
      action: 'approve',
      status: 'completed',
    });
    await expect(flow.done).resolves.toEqual({ approved: true });
    await waitFor(() => seenByBob.length === 2);
    expect(seenByBob[1]).toMatchObject({ flowId: flow.id, kind: 'completed', result: { approved: true } });

    // A flow that fails: `done` rejects with the flow's error.
    const failing = await session.startFlow('approval');
    await waitFor(() => failing.step === 'awaiting_review');
    await bobSession.actOnFlow(failing.id, 'reject');
    const failure = await failing.done.catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(FlowError);
    expect(failure).toMatchObject({ code: -31006, data: { reason: 'rejected' } });
    await waitFor(() => seenByBob.some((e) => e.flowId === failing.id && e.kind === 'failed'));

    // Cancelled by its initiator: `done` rejects; a late action is refused.
    const cancelled = await session.startFlow('approval');
    await cancelled.cancel();
    await expect(cancelled.done).rejects.toMatchObject({ code: -31006, data: { reason: 'cancelled' } });
    await expect(bobSession.actOnFlow(cancelled.id, 'approve')).rejects.toMatchObject({
      code: -31006,
      data: { reason: 'already_terminal' },
    });

    // On the client's own session too, acting through the handle.
    const own = await alice.client.startFlow('approval', {}, { flowId: 'flow-own-1' });
    await waitFor(() => own.step === 'awaiting_review');
    await expect(own.act('approve')).resolves.toMatchObject({ status: 'completed' });
    await expect(own.done).resolves.toEqual({ approved: true });
    // An unknown flow type is refused with the typed error.
    await expect(alice.client.startFlow('no-such-flow')).rejects.toMatchObject({ code: -31005 });
  });

  it('close() rejects a pending call and the flows being followed with ConnectionClosedError', async () => {
    const { url } = await responder();
    const alice = await bed.client(url);
    const flow = await alice.client.startFlow('approval');
    await waitFor(() => flow.step === 'awaiting_review');
    const pending = alice.client.request('wmp.message.poll', {});
    await alice.client.close();
    await expect(pending).rejects.toBeInstanceOf(ConnectionClosedError);
    await expect(flow.done).rejects.toBeInstanceOf(ConnectionClosedError);
    await expect(alice.client.request('wmp.capability.list')).rejects.toBeInstanceOf(ConnectionClosedError);
  });
});
