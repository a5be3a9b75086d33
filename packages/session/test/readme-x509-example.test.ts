import { expect } from 'vitest';
import { describeReadmeExample } from '../../../test-support/readme-example.js';

function expectOutput(lines: string[]): void {
  expect(lines).toEqual([
    'accepted_schemes: did:jwk did:key x509:san:dns x509:san:uri x509:sha256',
    'authenticated as: x509:san:dns:wallet.example.com',
    'another responder: -31002 {"reason":"responder_auth_failed","detail":"unexpected_responder"}',
    'a name not in the certificate: -31002 {"reason":"san_mismatch"}',
    'did:web here: -31002 {"reason":"unsupported_scheme"}',
  ]);
}

describeReadmeExample({ testUrl: import.meta.url, example: 'examples/x509.ts', expectOutput });
