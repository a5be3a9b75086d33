import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import {
  coreMethods,
  ErrorCode,
  MethodRegistry,
  MethodRegistryError,
  methodParams,
  methodResult,
  notificationMethod,
  ohanMethods,
  requestMethod,
  validateParams,
  wmpMethods,
} from '../src/index.js';

const echo = requestMethod(methodParams({ text: v.string() }), methodResult({ echo: v.string() }), {
  capability: 'org.example.echo',
});
const wmp = { version: '0.1', session_id: 'ses-1' };

function refusal(run: () => unknown): string | undefined {
  try {
    run();
  } catch (e) {
    return e instanceof MethodRegistryError ? e.code : 'other';
  }
  return undefined;
}

describe('method descriptors', () => {
  // The tables each layer used to keep by hand, now read from the descriptors.
  it('say which methods run without a session or on a pending one', () => {
    expect(coreMethods.names((s) => s.access === 'sessionless')).toEqual([
      'wmp.session.create',
      'wmp.session.resume',
      'wmp.session.join',
    ]);
    expect(coreMethods.names((s) => s.access === 'pending')).toEqual(['wmp.session.authenticate', 'wmp.session.close']);
  });

  it('name the capability each method needs and which carry content under MLS', () => {
    const byCapability = Object.fromEntries(
      coreMethods.names((s) => s.capability !== undefined).map((n) => [n, coreMethods.get(n)?.capability]),
    );
    expect(byCapability).toEqual({
      'wmp.flow.start': 'flows',
      'wmp.flow.progress': 'flows',
      'wmp.flow.action': 'flows',
      'wmp.flow.complete': 'flows',
      'wmp.flow.error': 'flows',
      'wmp.flow.cancel': 'flows',
      'wmp.resolve': 'resolve',
      'wmp.evidence.notify': 'evidence',
      'wmp.evidence.ack': 'evidence',
    });
    expect(coreMethods.names((s) => s.content !== undefined).sort()).toEqual(
      [
        'wmp.message.deliver',
        'wmp.flow.start',
        'wmp.flow.action',
        'wmp.flow.progress',
        'wmp.flow.complete',
        'wmp.flow.error',
      ].sort(),
    );
    expect(coreMethods.get('wmp.message.deliver')?.content).toEqual({ capability: 'messaging', clear: ['to'] });
  });

  it('say what a responder sends an initiator, and where it goes', () => {
    expect(coreMethods.names((s) => s.toInitiator === 'session')).toEqual([
      'wmp.session.close',
      'wmp.message.deliver',
      'wmp.message.status',
      'wmp.message.notice',
      'wmp.flow.progress',
      'wmp.flow.complete',
      'wmp.flow.error',
      'wmp.evidence.notify',
    ]);
    expect(coreMethods.names((s) => s.toInitiator === 'group')).toEqual([
      'wmp.mls.group.create',
      'wmp.mls.group.join',
      'wmp.mls.group.add',
      'wmp.mls.group.remove',
      'wmp.mls.group.update',
    ]);
  });

  it('keep the OHAN methods out of the WMP table', () => {
    expect(Object.keys(ohanMethods)).toEqual([
      'ohan.mls.keypackage.publish',
      'ohan.mls.keypackage.fetch',
      'ohan.relay.resolve',
    ]);
    for (const name of Object.keys(ohanMethods)) expect(coreMethods.has(name)).toBe(false);
    expect(coreMethods.names()).toEqual(Object.keys(wmpMethods));
  });
});

describe('MethodRegistry', () => {
  it('validates a custom method it defines, and only in that registry', () => {
    const methods = new MethodRegistry(coreMethods).define('org.example.echo', echo);
    expect(methods.validateParams('org.example.echo', { wmp, text: 'hi' })).toEqual({ wmp, text: 'hi' });
    expect(() => methods.validateParams('org.example.echo', { wmp, text: 1 })).toThrow(
      expect.objectContaining({
        code: ErrorCode.InvalidParams,
        data: { reason: 'text: Invalid type: Expected string but received 1' },
      }),
    );
    expect(methods.validateResult('org.example.echo', { echo: 'HI' })).toEqual({ echo: 'HI' });
    expect(methods.has('wmp.message.deliver')).toBe(true);
    expect(() => validateParams('org.example.echo', { wmp, text: 'hi' })).toThrow(
      expect.objectContaining({ code: ErrorCode.MethodNotFound }),
    );
    expect(coreMethods.has('org.example.echo')).toBe(false);
  });

  it('refuses wmp.* names, bad names, a second definition and a malformed descriptor', () => {
    const methods = new MethodRegistry(coreMethods);
    expect(refusal(() => methods.define('wmp.example.echo', echo))).toBe('reserved_name');
    expect(refusal(() => methods.define('wmp.message.deliver', echo))).toBe('reserved_name');
    for (const name of ['echo', '', '.echo', 'org..echo', 'org.example.echo!', `org.${'x'.repeat(130)}`]) {
      expect(refusal(() => methods.define(name, echo))).toBe('invalid_name');
    }
    methods.define('org.example.echo', echo);
    expect(refusal(() => methods.define('org.example.echo', echo))).toBe('already_defined');
    const noResult = { kind: 'request', params: methodParams({}), result: undefined } as const;
    expect(refusal(() => methods.define('org.example.a', noResult))).toBe('invalid_descriptor');
    const notSchema = { kind: 'notification', params: {}, result: undefined } as never;
    expect(refusal(() => methods.define('org.example.b', notSchema))).toBe('invalid_descriptor');
    expect(refusal(() => methods.define('org.example.c', notificationMethod(methodParams({}))))).toBeUndefined();
  });

  it('shares the core table frozen: definitions go on a copy', () => {
    expect(refusal(() => coreMethods.define('org.example.echo', echo))).toBe('frozen');
    expect(new MethodRegistry(coreMethods).define('org.example.echo', echo).has('org.example.echo')).toBe(true);
  });

  it('answers -32601 for a name it does not know', () => {
    expect(() => new MethodRegistry().require('org.example.echo')).toThrow(
      expect.objectContaining({ code: ErrorCode.MethodNotFound }),
    );
    expect(new MethodRegistry().validateParams.bind(new MethodRegistry(), 'x.y', {})).toThrow(
      expect.objectContaining({ code: ErrorCode.MethodNotFound }),
    );
  });
});
