// Credentials for the identity-assertion tests, made here with the tests' own issuer keys: a
// did:key issuer (Ed25519), an X.509 issuer under the test PKI (ES256, x5c), and an https issuer
// whose keys are published as JWT VC issuer metadata by a local HTTP server, which also serves
// token status lists. The https issuer's credentials are made by the SD-JWT library directly with
// @sd-jwt/crypto-nodejs (node:crypto), not by our `issueSdJwtVc`.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ES256 } from '@sd-jwt/crypto-nodejs';
import { createHeaderAndPayload, StatusList } from '@sd-jwt/jwt-status-list';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import { b64urlEncode, generateKeypair, type Keypair, sha256, utf8 } from '@wmp/jcs-signing';
import type { JwsSigner } from '../src/auth/jws.js';
import { signCompactJwt } from '../src/jwt/compact-jwt.js';
import { ed25519HolderKey, type HolderKey, issueSdJwtVc } from '../src/sd-jwt.js';
import { signerOf } from './auth-helpers.js';
import { makePki, type TestPki } from './pki.js';

export const VCT = 'https://credentials.example.com/identity';
export const CLAIMS = { given_name: 'Alice', family_name: 'Example', birthdate: '1990-01-01' };
export const DISCLOSABLE = ['given_name', 'family_name', 'birthdate'];

/** An Ed25519 keypair as a JWS signer with its did:key `kid`. */
export function didSigner(keypair: Keypair): JwsSigner {
  return { alg: 'EdDSA', kid: keypair.kid, sign: (data) => keypair.sign(data) };
}

export interface DidIssuer {
  readonly did: string;
  issue(holder: HolderKey, extra?: { expiresAt?: number; status?: { idx: number; uri: string } }): Promise<string>;
}

export function didIssuer(): DidIssuer {
  const keypair = generateKeypair();
  return {
    did: keypair.did,
    issue: (holder, extra = {}) =>
      issueSdJwtVc({
        issuer: keypair.did,
        vct: VCT,
        claims: CLAIMS,
        disclosable: DISCLOSABLE,
        holder: holder.publicJwk,
        signer: didSigner(keypair),
        expiresAt: extra.expiresAt ?? Date.now() + 3600_000,
        ...(extra.status ? { status: extra.status } : {}),
      }),
  };
}

export interface X509Issuer {
  readonly pki: TestPki;
  /** The https issuer named by the leaf's DNS SAN. */
  readonly iss: string;
  issue(holder: HolderKey, leaf?: 'good' | 'foreign'): Promise<string>;
}

export async function x509Issuer(): Promise<X509Issuer> {
  const pki = await makePki();
  const iss = 'https://wallet.example.com';
  return {
    pki,
    iss,
    async issue(holder, leaf = 'good') {
      const cert = leaf === 'good' ? pki.dnsLeaf : pki.foreignLeaf;
      const chain = leaf === 'good' ? [pki.dnsLeaf.b64, pki.intermediate.b64] : [pki.foreignLeaf.b64];
      return issueSdJwtVc({
        issuer: iss,
        vct: VCT,
        claims: CLAIMS,
        disclosable: DISCLOSABLE,
        holder: holder.publicJwk,
        signer: await signerOf(cert.key, 'ES256'),
        x5c: chain,
        expiresAt: Date.now() + 3600_000,
      });
    },
  };
}

export function holderKey(): HolderKey & { readonly keypair: Keypair } {
  const keypair = generateKeypair();
  return { ...ed25519HolderKey(keypair), keypair };
}

/**
 * An https issuer on a local HTTP server: `/.well-known/jwt-vc-issuer` with its JWKS, and token
 * status lists at `/status/<n>` (whose entries the test sets).
 */
export interface WebIssuer {
  readonly origin: string;
  /** Credentials made by the library with node:crypto ES256 keys. */
  issue(holder: HolderKey, status?: { idx: number; uri: string }): Promise<string>;
  /** Publishes a status list at `/status/<name>` with these statuses, signed by the issuer. */
  publishStatusList(name: string, statuses: number[]): Promise<string>;
  /** Requests served so far, by path. */
  readonly requests: string[];
  close(): Promise<void>;
}

export async function webIssuer(): Promise<WebIssuer> {
  const { publicKey, privateKey } = await ES256.generateKeyPair();
  const kid = 'issuer-key-1';
  const signer = await ES256.getSigner(privateKey);
  const documents = new Map<string, { type: string; body: string }>();
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(req.url ?? '');
    const doc = documents.get(req.url ?? '');
    if (!doc) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': doc.type }).end(doc.body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  documents.set('/.well-known/jwt-vc-issuer', {
    type: 'application/json',
    body: JSON.stringify({ issuer: origin, jwks: { keys: [{ ...publicKey, kid, alg: 'ES256' }] } }),
  });
  const instance = new SDJwtVcInstance({
    signer,
    signAlg: ES256.alg,
    hasher: (data) => sha256(typeof data === 'string' ? utf8(data) : new Uint8Array(data)),
    saltGenerator: () => b64urlEncode(crypto.getRandomValues(new Uint8Array(16))),
  });
  return {
    origin,
    requests,
    issue: (holder, status) =>
      instance.issue(
        {
          iss: origin,
          vct: VCT,
          iat: Math.floor(Date.now() / 1000),
          exp: Math.floor(Date.now() / 1000) + 3600,
          cnf: { jwk: holder.publicJwk },
          ...CLAIMS,
          ...(status ? { status: { status_list: status } } : {}),
        },
        { _sd: DISCLOSABLE } as never,
        { header: { typ: 'vc+sd-jwt', kid } },
      ),
    async publishStatusList(name, statuses) {
      const uri = `${origin}/status/${name}`;
      const { header, payload } = createHeaderAndPayload(
        new StatusList(statuses, 1),
        { sub: uri, iat: Math.floor(Date.now() / 1000), iss: origin },
        { alg: 'ES256', typ: 'statuslist+jwt', kid },
      );
      const jws: JwsSigner = {
        alg: 'ES256',
        sign: async (data) => {
          const sig = await signer(new TextDecoder().decode(data));
          return new Uint8Array(Buffer.from(sig, 'base64url'));
        },
      };
      const { alg: _alg, ...rest } = header;
      documents.set(`/status/${name}`, {
        type: 'application/statuslist+jwt',
        body: await signCompactJwt({ ...rest, kid }, payload as Record<string, unknown>, jws),
      });
      return uri;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** The global fetch, as a `DocumentFetch` (the tests' servers are on loopback, over http). */
export const plainFetch = (url: string, init: { signal: AbortSignal; headers: Record<string, string> }) =>
  fetch(url, { ...init, redirect: 'error' });
