// Writes examples/fixtures/: the example PKI of examples/x509.ts (valid 2026..2126). Not a test;
// run by hand to remake them: node_modules/.bin/tsx --conditions=@wmp/source test/example-fixtures.ts
// (from the repository root, with packages/session/ in front of the path).
import { writeFileSync } from 'node:fs';
import { issue, newKey } from './pki.js';

const dir = new URL('../examples/fixtures/', import.meta.url);
const notBefore = new Date('2026-01-01T00:00:00Z');
const notAfter = new Date('2126-01-01T00:00:00Z');
const caUsage = ['keyCertSign', 'cRLSign'] as const;
const root = await issue({
  subject: 'Example WMP Root',
  key: newKey('p256'),
  ca: true,
  keyUsage: caUsage,
  notBefore,
  notAfter,
});
const intermediate = await issue({
  subject: 'Example WMP Intermediate',
  key: newKey('p256'),
  issuer: root,
  ca: true,
  keyUsage: caUsage,
  notBefore,
  notAfter,
});
const leaf = (name: string) =>
  issue({
    subject: name,
    key: newKey('p256'),
    issuer: intermediate,
    dns: [name],
    keyUsage: ['digitalSignature'],
    notBefore,
    notAfter,
  });
const wallet = await leaf('wallet.example.com');
const relay = await leaf('relay.example.net');
writeFileSync(new URL('root.pem', dir), root.pem);
writeFileSync(new URL('wallet-chain.pem', dir), wallet.pem + intermediate.pem);
writeFileSync(new URL('wallet-key.pem', dir), wallet.key.pkcs8Pem);
writeFileSync(new URL('relay-chain.pem', dir), relay.pem + intermediate.pem);
writeFileSync(new URL('relay-key.pem', dir), relay.key.pkcs8Pem);
