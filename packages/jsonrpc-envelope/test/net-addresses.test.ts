import { describe, expect, it } from 'vitest';
import { isLoopbackAddress, isLoopbackHost, isPrivateAddress } from '../src/index.js';

describe('addresses', () => {
  it('knows private and loopback addresses', () => {
    for (const a of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '::1',
      '::',
      'fe80::1',
      'fc00::1',
      'fd12:3456::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      '64:ff9b::a00:1',
      '2002:a00:1::1',
      '2001:db8::1',
      'not an ip',
    ]) {
      expect(isPrivateAddress(a), a).toBe(true);
    }
    for (const a of ['93.184.216.34', '8.8.8.8', '2606:4700::1111', '::ffff:8.8.8.8', '2a00:1450:4001::200e']) {
      expect(isPrivateAddress(a), a).toBe(false);
    }
  });

  it('the loopback test is on addresses: 127/8, ::1 and ::ffff:127.x, never a host-name prefix', () => {
    for (const a of [
      '127.0.0.1',
      '127.1.2.3',
      '127.255.255.255',
      '::1',
      '[::1]',
      '0:0:0:0:0:0:0:1',
      '::ffff:127.0.0.2',
    ]) {
      expect(isLoopbackAddress(a), a).toBe(true);
    }
    for (const a of [
      '127.attacker.example',
      '127.0.0.1.nip.io',
      '127.0.0.1.',
      '128.0.0.1',
      '10.0.0.1',
      '::2',
      '::ffff:128.0.0.1',
      '::127.0.0.1',
      'localhost',
      '',
    ]) {
      expect(isLoopbackAddress(a), a).toBe(false);
    }
    expect(isLoopbackHost('localhost')).toBe(true);
    expect(isLoopbackHost('LOCALHOST')).toBe(true);
    expect(isLoopbackHost('127.0.0.9')).toBe(true);
    expect(isLoopbackHost('[::1]')).toBe(true);
    for (const h of ['127.attacker.example', 'localhost.attacker.example', 'evil.localhost', '127.0.0.1.example']) {
      expect(isLoopbackHost(h), h).toBe(false);
    }
  });
});
