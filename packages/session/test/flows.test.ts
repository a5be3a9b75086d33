import { describe, expect, it } from 'vitest';
import { FlowManager, type WmpSession } from '../src/index.js';
import { codeOf, harness, tick } from './helpers.js';

/** A responder whose approval flow asks for review, then completes on approve. */
function approvalServer(options: { timeoutSeconds?: number } = {}) {
  const flows = new FlowManager({
    ...(options.timeoutSeconds ? { defaultTimeoutSeconds: options.timeoutSeconds } : {}),
    types: {
      approval: {
        actions: { awaiting_review: ['approve', 'reject'] },
        async onStart(_params, flow) {
          await flow.progress('awaiting_review', { reviewer: 'did:key:bob' });
        },
        async onAction(action, params, flow) {
          if (action === 'approve') await flow.complete({ approved: true, comment: params.comment ?? null });
          else await flow.fail('rejected');
        },
      },
      oid4vci: { capability: 'oid4vci' },
    },
  });
  return harness({ flows, capabilities: { messaging: {}, flows: { max_concurrent: 2 } } });
}

async function flowError(session: WmpSession, method: string, params: Record<string, unknown>) {
  const e = (await session.request(method, params).catch((x) => x)) as { code: number; data: unknown };
  return { code: e.code, data: e.data };
}

describe('flows (core §6)', () => {
  it('runs an approval flow: start, progress, action, complete', async () => {
    const { session } = await approvalServer().open();
    const steps: string[] = [];
    const { flowId, done } = await session.startFlow(
      'approval',
      { subject: 'Review' },
      { flowId: 'flow-1', onProgress: (step) => steps.push(step) },
    );
    expect(flowId).toBe('flow-1');
    await tick();
    expect(steps).toEqual(['awaiting_review']);
    await expect(
      session.request('wmp.flow.action', { flow_id: 'flow-1', action: 'approve', params: { comment: 'ok' } }),
    ).resolves.toMatchObject({
      flow_id: 'flow-1',
      status: 'completed',
    });
    await expect(done).resolves.toEqual({ approved: true, comment: 'ok' });
  });

  it('refuses an action outside the step with a retryable -31006 naming the step', async () => {
    const { session } = await approvalServer().open();
    await session.startFlow('approval', {}, { flowId: 'f' });
    await tick();
    expect(await flowError(session, 'wmp.flow.action', { flow_id: 'f', action: 'dance' })).toEqual({
      code: -31006,
      data: { flow_id: 'f', reason: 'invalid_action', retryable: true, current_step: 'awaiting_review' },
    });
    expect((await flowError(session, 'wmp.flow.action', { flow_id: 'nope', action: 'approve' })).code).toBe(-31006);
  });

  it('cancels: only once, and then already_terminal', async () => {
    const { session } = await approvalServer().open();
    await session.startFlow('approval', {}, { flowId: 'c' });
    await expect(session.request('wmp.flow.cancel', { flow_id: 'c', reason: 'user_cancelled' })).resolves.toMatchObject(
      { status: 'cancelled' },
    );
    expect(await flowError(session, 'wmp.flow.cancel', { flow_id: 'c' })).toMatchObject({
      code: -31006,
      data: { reason: 'already_terminal' },
    });
    expect(await flowError(session, 'wmp.flow.action', { flow_id: 'c', action: 'approve' })).toMatchObject({
      data: { reason: 'already_terminal' },
    });
  });

  it('refuses a flow type whose capability was not negotiated, and more flows than max_concurrent', async () => {
    const { session } = await approvalServer().open();
    expect(await flowError(session, 'wmp.flow.start', { flow_type: 'oid4vci', flow_id: 'x' })).toEqual({
      code: -31005,
      data: { capability: 'oid4vci' },
    });
    expect(
      await flowError(session, 'wmp.flow.start', { flow_type: 'sign', flow_id: 's', params: { action: 'nonsense' } }),
    ).toMatchObject({ code: -32602 });
    await session.startFlow('approval', {}, { flowId: 'a1' });
    await session.startFlow('approval', {}, { flowId: 'a2' });
    expect(await flowError(session, 'wmp.flow.start', { flow_type: 'approval', flow_id: 'a3' })).toMatchObject({
      code: -31006,
      data: { reason: 'too_many_flows' },
    });
    expect(await flowError(session, 'wmp.flow.start', { flow_type: 'approval', flow_id: 'a1' })).toMatchObject({
      code: -31006,
    });
  });

  it('times a flow out with wmp.flow.error reason timeout', async () => {
    const { session } = await approvalServer({ timeoutSeconds: 0.05 }).open();
    const { done } = await session.startFlow('approval', {}, { flowId: 't' });
    await expect(done).rejects.toMatchObject({ code: -31006, data: { reason: 'timeout' } });
  });

  it('re-sends the latest progress of each active flow on resume', async () => {
    const h = approvalServer();
    const { session, peer } = await h.open();
    await session.startFlow('approval', {}, { flowId: 'r' });
    await tick();
    await peer.close();
    const seen: string[] = [];
    session.on('notification', (n) => seen.push(`${n.method}:${n.params.step}`));
    await session.resume(await h.connect());
    await tick(30);
    expect(seen).toEqual(['wmp.flow.progress:awaiting_review']);
  });

  it('lets only the initiator or a named participant cancel', async () => {
    const h = approvalServer();
    const { session } = await h.open();
    await session.startFlow('approval', {}, { flowId: 'p' });
    const flows = h.server.flows;
    expect(() => flows.cancel(session.id, 'p', 'did:key:stranger')).toThrow(expect.objectContaining({ code: -31002 }));
    expect(flows.cancel(session.id, 'p', session.sender).state).toBe('cancelled');
    expect(await codeOf(Promise.resolve())).toBe('ok');
  });
});
