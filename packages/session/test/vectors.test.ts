import { rfc3339 } from '@wmp/jsonrpc-envelope';
import { describe, expect, it } from 'vitest';
import { FlowManager, InMemoryTransport, type WmpServer } from '../src/index.js';
import {
  type ConnectRaw,
  describeVectors,
  Identities,
  loadVectors,
  rawClientFrom,
  runApprovalLifecycle,
  runSimple,
  vectorServer,
} from './vector-harness.js';

async function connectInMemory(server: WmpServer) {
  const [client, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const raw = rawClientFrom(
    (m) => client.send(m as never),
    () => client.close(),
  );
  client.onmessage = (frame) => raw.push(String(frame));
  await client.start();
  return raw;
}

// The same vectors run over WebSocket, HTTP+SSE and stdio in @wmp/transports.
describeVectors('an in-memory connection', connectInMemory);

const vector = (file: string, id: string) => loadVectors(file).find((v) => v.id === id)!;

describe("the vector harness's checks fail when the server misbehaves", () => {
  const ids = new Identities();
  const plaintext = vector('message-deliver.json', 'message-deliver-plaintext');
  const approval = vector('flow-lifecycle.json', 'flow-approval-full-lifecycle');

  it('passes the well-behaved server (the baseline of the cases below)', async () => {
    await runSimple(connectInMemory, await vectorServer(), plaintext, false, ids);
  });

  it('a stray notification sent while a deliver notification is handled', async () => {
    const vs = await vectorServer({
      hooks: {
        deliver: (_p, ctx) => {
          void ctx.notify('wmp.message.status', { message_id: 'msg-x', status: 'delivered' });
        },
      },
    });
    await expect(runSimple(connectInMemory, vs, plaintext, false, ids)).rejects.toThrow(
      /what arrived after the notification/,
    );
  });

  it('an answer to a notification', async () => {
    // The connection shows an answer to each notification sent on it: a server that answers them.
    const answering: ConnectRaw = async (server) => {
      const raw = await connectInMemory(server);
      return {
        ...raw,
        async send(m: any) {
          await raw.send(m);
          if (!('id' in m)) raw.push(JSON.stringify({ jsonrpc: '2.0', id: null, result: {} }));
        },
      };
    };
    await expect(runSimple(answering, await vectorServer(), plaintext, false, ids)).rejects.toThrow(
      /what arrived after the notification/,
    );
  });

  it('a deliver notification the server refuses instead of taking', async () => {
    const vs = await vectorServer({ authorize: (ctx) => ctx.request.method !== 'wmp.message.deliver' });
    await expect(runSimple(connectInMemory, vs, plaintext, false, ids)).rejects.toThrow(/refused/);
  });

  it('a flow that reports the wrong step, or names the wrong approver', async () => {
    const wrongStep = await vectorServer({
      flows: new FlowManager({
        types: {
          approval: {
            onStart: (_p, flow) => flow.progress('reviewing', { reviewer: 'x', deadline: rfc3339(Date.now()) }),
          },
        },
      }),
    });
    await expect(runApprovalLifecycle(connectInMemory, wrongStep, approval, ids)).rejects.toThrow(
      /the wmp.flow.progress notification/,
    );

    const wrongApprover = await vectorServer({
      flows: new FlowManager({
        types: {
          approval: {
            onStart: async (_p, flow) =>
              flow.progress('awaiting_review', {
                reviewer: ids.did('x509:san:dns:bob.example.com'),
                deadline: rfc3339(Date.now()),
              }),
            onAction: (_a, _p, flow) =>
              flow.complete({
                approved: true,
                approver: ids.did('x509:san:dns:alice.example.com'),
                timestamp: rfc3339(Date.now()),
              }),
          },
        },
      }),
    });
    await expect(runApprovalLifecycle(connectInMemory, wrongApprover, approval, ids)).rejects.toThrow(
      /the wmp.flow.complete notification/,
    );
  });
});
