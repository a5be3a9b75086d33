import { expect } from 'vitest';
import { describeReadmeExample } from '../../../test-support/readme-example.js';

function expectOutput(lines: string[]): void {
  expect(lines).toEqual([
    'accepted_schemes: did x509',
    'accepted_identifier_schemes: did:jwk did:key x509:san:dns x509:san:uri x509:sha256',
    'authenticated as: x509:san:dns:wallet.example.com',
    'the relay proved its relay_id: true',
    'another relay expected: -31002 {"reason":"responder_auth_failed","detail":"unexpected_responder"}',
  ]);
}

describeReadmeExample({ testUrl: import.meta.url, example: 'examples/authentication.ts', expectOutput });
