// Issue 23 item 5: the loopback test was a host-name prefix, so `127.attacker.example` counted as
// loopback and its well-known document was fetched over plain HTTP. Loopback is an address now.
import { describe, expect, it } from 'vitest';
import { relayOfDocument, wellKnownUrlOf } from '../src/relay/federation/builtin-resolvers.js';
import { parseRoute, relayOriginOf } from '../src/relay/federation/federation-config.js';

const everything = () => true;
const nothing = () => false;

describe('federation URLs: loopback is an address, never a name that starts with 127.', () => {
  it('fetches the well-known document of a name over https, whatever the name looks like', () => {
    for (const host of ['127.attacker.example', '127.0.0.1.attacker.example', 'localhost.attacker.example:8080']) {
      expect(wellKnownUrlOf(host, everything), host).toBe(`https://${host}/.well-known/wmp-configuration`);
    }
  });

  it('plain http only to a loopback address whose http origin may be reached (configured, or private peers allowed)', () => {
    expect(wellKnownUrlOf('127.0.0.1:9', everything)).toBe('http://127.0.0.1:9/.well-known/wmp-configuration');
    expect(wellKnownUrlOf('127.0.0.1:9', nothing)).toBe('https://127.0.0.1:9/.well-known/wmp-configuration');
    expect(wellKnownUrlOf('[::1]:9', everything)).toBe('http://[::1]:9/.well-known/wmp-configuration');
    expect(wellKnownUrlOf('evil.example/path', everything)).toBeUndefined();
    expect(wellKnownUrlOf('user@evil.example', everything)).toBeUndefined();
  });

  it('a relay URL over plain http names loopback by address (or `localhost` itself) only', () => {
    expect(relayOriginOf('http://127.attacker.example/wmp')).toBeUndefined();
    expect(relayOriginOf('ws://127.attacker.example:8080/wmp')).toBeUndefined();
    expect(relayOriginOf('http://127.0.0.2:8080/wmp')).toBe('http://127.0.0.2:8080');
    expect(relayOriginOf('http://localhost:8080')).toBe('http://localhost:8080');
    expect(() => parseRoute('did:key:z*=http://127.attacker.example')).toThrow(RangeError);
    expect(relayOfDocument({ relay: 'http://127.attacker.example' }, everything)).toBeUndefined();
    expect(relayOfDocument({ relay: 'https://relay.example/wmp' }, everything)).toBe('https://relay.example');
    expect(relayOfDocument({ relay: 'https://relay.example/wmp' }, nothing)).toBeUndefined();
  });
});
