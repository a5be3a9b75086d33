import { generateKeypair } from '@wmp/jcs-signing';
import { Peer, WmpSession } from '@wmp/session';
import { HttpClientTransport } from '@wmp/transports';
import { describe, expect, it } from 'vitest';
import { MemoryRelayStores } from '../src/node.js';
import { CLIENT_CAPABILITIES, relayTestbed } from './fixtures/relay-clients.js';

// The relay's HTTP binding as clients that read no response header use it (docs/wmp-profile.md,
// "Bindings").
const testbed = relayTestbed();

async function httpSession(url: string, participants?: string[]) {
  const transport = new HttpClientTransport({ endpoint: `${url}/wmp`, events: false });
  const peer = new Peer(transport);
  await peer.start();
  const session = await WmpSession.open(peer, {
    signer: generateKeypair(),
    capabilities: CLIENT_CAPABILITIES,
    ...(participants ? { participants } : {}),
  });
  return { transport, peer, session };
}

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${url}/wmp`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

const list = (id: number, sessionId: string) => ({
  jsonrpc: '2.0',
  id,
  method: 'wmp.capability.list',
  params: { wmp: { version: '0.1', session_id: sessionId } },
});

describe('the HTTP binding at the relay', () => {
  it('answers JSON-RPC errors with HTTP 200 and the request id, and returns the session token in results', async () => {
    const url = await testbed.setup({ store: new MemoryRelayStores() });
    const { transport, session, peer } = await httpSession(url);
    try {
      const res = await post(url, list(7, session.id));
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -31002 } });
      // The token of the create result, presented as `Authorization: Bearer`.
      const ok = await post(url, list(8, session.id), { Authorization: `Bearer ${transport.sessionToken}` });
      expect(await ok.json()).toMatchObject({ id: 8, result: { capabilities: {} } });
      const raw = await post(url, {
        jsonrpc: '2.0',
        id: 'c',
        method: 'wmp.session.create',
        params: { wmp: { version: '0.1' } },
      });
      const created = (await raw.json()) as { result: { wmp: { session_token: string } } };
      expect(created.result.wmp.session_token).toBe(raw.headers.get('wmp-session-token'));
    } finally {
      await peer.close();
    }
  });

  it('with httpSessionIdBinding, binds hop sessions by id alone, never group sessions', async () => {
    const url = await testbed.setup({ store: new MemoryRelayStores(), httpSessionIdBinding: true });
    const hop = await httpSession(url);
    const group = await httpSession(url, [generateKeypair().did]);
    try {
      expect(await (await post(url, list(1, hop.session.id))).json()).toMatchObject({ id: 1, result: {} });
      expect(await (await post(url, list(2, group.session.id))).json()).toMatchObject({
        id: 2,
        error: { code: -31002 },
      });
      // Without the flag (the default) neither works by id alone: the first test shows the hop case.
    } finally {
      await hop.peer.close();
      await group.peer.close();
    }
  });
});
