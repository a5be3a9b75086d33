import { expect } from 'vitest';
import { describeReadmeExample } from '../../../test-support/readme-example.js';

const MULTIKEY = /z6Mk[1-9A-HJ-NP-Za-km-z]+/.source;
const TIME = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z/.source;

/** What the example prints, line by line, apart from random keys, times, nonces and hashes. */
function expectOutput(lines: string[], path: string): void {
  expect(lines).toEqual([
    `crypto path: ${path}`,
    'card verified: ohan.card.1 relays ["https://box.example"]',
    'event.protocol: ohan.event.1',
    'event.seal: x25519-sha256-aesgcm-1',
    expect.stringMatching(new RegExp(`^event\\.to: ${MULTIKEY}$`)),
    expect.stringMatching(/^event\.epk: [0-9a-f]{64}$/),
    expect.stringMatching(new RegExp(`^event\\.ts: ${TIME}$`)),
    expect.stringMatching(new RegExp(`^event\\.exp: ${TIME}$`)),
    'event.kind: sealed',
    expect.stringMatching(new RegExp(`^event\\.from_key: ${MULTIKEY}$`)),
    // A ~370-byte envelope pads to 512 bytes: base64 of 12 + 16 + 512 bytes.
    expect.stringMatching(/^event\.payload: [A-Za-z0-9+/]{12}\.\.\. \(720 chars\)$/),
    expect.stringMatching(/^event\.stamp: \{"bits":8,"nonce":"[0-9A-Za-z_-]{11}"\}$/),
    expect.stringMatching(/^event\.id: 00[0-9a-f]{62}$/),
    expect.stringMatching(/^event\.signature: z[1-9A-HJ-NP-Za-km-z]+$/),
    expect.stringMatching(/^verifyEvent: \{"ok":true,"id":"00[0-9a-f]{62}","strength":8\}$/),
    'opened: wmp.message.deliver',
    'Authorization: OHAN-Sig eyJib2R5Ijoi...',
    'request: ok, caller is bob: true',
    'same header again: replay',
    'tampered: id',
  ]);
  const field = (name: string) => lines.find((l) => l.startsWith(`event.${name}: `))?.split(': ')[1];
  expect(field('to')).not.toBe(field('from_key'));
  expect(lines).toContain(`verifyEvent: {"ok":true,"id":"${field('id')}","strength":8}`);
  expect(Date.parse(field('exp')!) - Date.parse(field('ts')!)).toBe(7 * 24 * 3600 * 1000);
}

describeReadmeExample({
  testUrl: import.meta.url,
  expectOutput,
  importExample: () => import('../examples/quick-start.js'),
});
