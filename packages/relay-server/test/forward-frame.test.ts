import { describe, expect, it } from 'vitest';
import { forwardFrame } from '../src/relay/routing/forward-frame.js';
import type { RoutedMessage } from '../src/relay/routing/routed-message.js';

/** A message as `Router.routedMessage` builds it: content first, then `wmp` with relay_chain last. */
function routed(content: Record<string, unknown>, wmp: Record<string, unknown>): RoutedMessage {
  return { jsonrpc: '2.0', method: 'wmp.message.deliver', params: { ...content, wmp } } as RoutedMessage;
}

/** What the forwarder wrote before: `JSON.stringify` of the copy with `session_id`. */
function copied(m: RoutedMessage, session: string): string {
  return JSON.stringify({
    jsonrpc: m.jsonrpc,
    method: m.method,
    params: { ...m.params, wmp: { ...m.params.wmp, session_id: session } },
  });
}

const chain = [{ relay: 'did:key:z6Mk', hop: 1, at: '2026-12-02T06:00:00Z', sig: 'abc' }];

describe('forwardFrame: the frame from the stored text (decision 0731)', () => {
  const cases: Array<[string, RoutedMessage]> = [
    [
      'a plain deliver',
      routed({ to: ['did:b'], body: { t: 1 } }, { sender: 'did:a', message_id: 'm1', relay_chain: chain }),
    ],
    [
      'text with quotes, braces, escapes and non-ASCII',
      routed(
        { to: ['did:b'], body: '}}} "\\" \u2028 é 😀 {"wmp":{}}' },
        { version: '0.1', sender: 'did:a', message_id: 'm"2}', relay_chain: chain },
      ),
    ],
    [
      'nested content ending in braces',
      routed({ body: { a: { b: { c: {} } } } }, { sender: 'did:a', relay_chain: [] }),
    ],
    ['an empty wmp', routed({ body: 'x' }, {})],
  ];
  for (const [name, m] of cases) {
    it(`writes ${name} byte for byte as JSON.stringify of the copy`, () => {
      const body = JSON.stringify(m);
      for (const session of ['s-1', 'a "quoted" \\ session é'])
        expect(forwardFrame(body, m, session)).toBe(copied(m, session));
      // Going out as it is (a group session): the stored text itself.
      expect(forwardFrame(body, m)).toBe(JSON.stringify({ jsonrpc: m.jsonrpc, method: m.method, params: m.params }));
      expect(JSON.parse(forwardFrame(body, m, 's-1')!)).toEqual(JSON.parse(copied(m, 's-1')));
    });
  }

  it('refuses what the splice cannot write: wmp not last, a session_id already, another shape', () => {
    // A kept status: `wmp` first in its params.
    const status = {
      jsonrpc: '2.0',
      method: 'wmp.message.status',
      params: { wmp: { version: '0.1', message_id: 'k' }, status: 'delivered' },
    } as unknown as RoutedMessage;
    expect(forwardFrame(JSON.stringify(status), status, 's')).toBeUndefined();
    const grouped = routed({ body: 1 }, { sender: 'did:a', session_id: 'g', relay_chain: chain });
    expect(forwardFrame(JSON.stringify(grouped), grouped, 's')).toBeUndefined();
    const reordered = {
      method: 'wmp.message.deliver',
      jsonrpc: '2.0',
      params: { wmp: {} },
    } as unknown as RoutedMessage;
    expect(forwardFrame(JSON.stringify(reordered), reordered)).toBeUndefined();
    const extra = { ...routed({ body: 1 }, { sender: 'did:a' }), id: 1 } as unknown as RoutedMessage;
    expect(forwardFrame(JSON.stringify(extra), extra)).toBeUndefined();
  });
});
