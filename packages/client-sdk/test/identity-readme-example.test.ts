import { expect } from 'vitest';
import { describeReadmeExample } from '../../../test-support/readme-example.js';

describeReadmeExample({
  testUrl: import.meta.url,
  example: 'examples/identity-and-stores.ts',
  expectOutput: (lines) => {
    expect(lines).toEqual([
      'did: did:key:z6Mk...',
      'signing key: z6Mk... enc key: z6LS...',
      'stored keys: identity',
      'file mode: 600',
      'same identity after reload: true',
      'exported fields: did,enc_secret,signing_seed,version',
      'imported: true',
      'card: ohan.card.1 2 relays, key true',
      'keys with a prefix: mailbox/relay/https://relay-a.example',
    ]);
  },
});
