import { generateKeypair } from '@wmp/jcs-signing';
import {
  coreMethods,
  MethodRegistry,
  MethodRegistryError,
  methodParams,
  methodResult,
  notificationMethod,
  requestMethod,
} from '@wmp/jsonrpc-envelope';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { WmpServer } from '../src/index.js';
import { codeOf, harness } from './helpers.js';

const wmp = (extra: Record<string, unknown> = {}) => ({ version: '0.1', ...extra });
const echo = requestMethod(methodParams({ text: v.string() }), methodResult({ echo: v.string() }), {
  capability: 'org.example.echo',
});
const echoHandler = (params: unknown) => ({ echo: (params as { text: string }).text });

describe('custom methods (core §9.2)', () => {
  it('handle() takes only a method the server knows: a typed refusal, not a handler validation refuses later', () => {
    const server = new WmpServer();
    const error = (() => {
      try {
        server.handle('org.example.echo', echoHandler);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(MethodRegistryError);
    expect((error as MethodRegistryError).code).toBe('not_defined');
    expect(() => server.handle('wmp.relay.register', () => ({ registered: true }))).not.toThrow();
  });

  it('a method defined on a running server is offered for negotiation, checked and served', async () => {
    const h = harness({ capabilities: { messaging: {} } });
    const before = await h.open({ capabilities: { messaging: {}, 'org.example.echo': {} } });
    expect(Object.keys(before.session.capabilities)).toEqual(['messaging']);
    h.server.method('org.example.echo', echo, echoHandler);
    expect(h.server.methods.has('org.example.echo')).toBe(true);
    // The session negotiated before the definition did not get the capability.
    expect(await codeOf(before.session.request('org.example.echo', { text: 'a' }))).toBe(-31005);
    const after = await h.open({ capabilities: { messaging: {}, 'org.example.echo': {} } });
    expect(after.session.capabilities).toEqual({ messaging: {}, 'org.example.echo': {} });
    await expect(after.session.request('org.example.echo', { text: 'a' })).resolves.toMatchObject({ echo: 'a' });
    expect(await codeOf(after.session.request('org.example.echo', { text: 1 }))).toBe(-32602);
    // A second server is untouched: each copies the core table.
    expect(new WmpServer().methods.has('org.example.echo')).toBe(false);
    expect(coreMethods.has('org.example.echo')).toBe(false);
  });

  it('keeps the configured parameters of a capability a custom method names', async () => {
    const h = harness({ capabilities: { messaging: {}, 'org.example.echo': { max_length: 5 } } });
    h.server.method('org.example.echo', echo, echoHandler);
    const { session } = await h.open({ capabilities: { 'org.example.echo': { max_length: 9 } } });
    expect(session.capabilities['org.example.echo']).toEqual({ max_length: 5 });
  });

  it('starts from a registry given as the methods option', async () => {
    const methods = new MethodRegistry(coreMethods).define('org.example.echo', echo);
    const h = harness({ capabilities: { messaging: {} }, methods });
    h.server.handle('org.example.echo', echoHandler);
    const { session } = await h.open({ capabilities: { 'org.example.echo': {} } });
    await expect(session.request('org.example.echo', { text: 'b' })).resolves.toMatchObject({ echo: 'b' });
  });

  it('a pending session may call a custom method only when its descriptor allows it', async () => {
    const h = harness({ capabilities: { messaging: {} } });
    h.server.method('org.example.ping', requestMethod(methodParams({}), methodResult({})), () => ({}));
    h.server.method(
      'org.example.hello',
      requestMethod(methodParams({}), methodResult({}), { access: 'pending' }),
      () => ({}),
    );
    const peer = await h.connect();
    const created = (await peer.request('wmp.session.create', {
      wmp: wmp({ sender: generateKeypair().did }),
      capabilities_offered: { messaging: {} },
    })) as { wmp: { session_id: string } };
    const session_id = created.wmp.session_id;
    expect(await codeOf(peer.request('org.example.ping', { wmp: wmp({ session_id }) }))).toBe(-31002);
    expect(await codeOf(peer.request('org.example.hello', { wmp: wmp({ session_id }) }))).toBe('ok');
  });

  it('a custom content method is held to the security mode like a core one (-31003)', async () => {
    const h = harness({ capabilities: { messaging: {} } });
    const rules = { capability: 'org.example.note', content: {} };
    h.server.method(
      'org.example.note.send',
      requestMethod(methodParams({ text: v.string() }), methodResult({}), rules),
      () => ({}),
    );
    h.server.method('org.example.note.seen', notificationMethod(methodParams({}), rules), () => undefined);
    expect(h.server.methods.names((spec) => spec.content !== undefined)).toContain('org.example.note.seen');
    const optional = await h.open({
      capabilities: { messaging: {}, 'org.example.note': {} },
      security: { mode: 'mls-optional', cipher_suites: [1], encrypted_capabilities: ['org.example.note'] },
    });
    const refused = (await optional.session.request('org.example.note.send', { text: 'x' }).catch((e) => e)) as {
      code: number;
      data: unknown;
    };
    expect([refused.code, refused.data]).toEqual([-31003, { capability: 'org.example.note' }]);
    const clear = await h.open({ capabilities: { messaging: {}, 'org.example.note': {} } });
    expect(await codeOf(clear.session.request('org.example.note.send', { text: 'x' }))).toBe('ok');
  });
});
