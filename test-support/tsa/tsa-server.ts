// A time-stamping authority for tests (RFC 3161 §3.4 over HTTP): a real server on a free loopback
// port that reads `application/timestamp-query` POSTs and answers `application/timestamp-reply`
// with real tokens (tokens.ts), under its own root CA (tsa-pki.ts). It can be told to misbehave:
// sign with a bad certificate, make a wrong token, refuse, or answer with an HTTP error.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as pkijs from 'pkijs';
import type { TestCert } from '../../packages/session/test/pki.js';
import { makeReply, makeToken, readQuery, type TokenFault } from './tokens.js';
import { makeTsaPki, type TsaCertificateKind, type TsaPki } from './tsa-pki.js';

/** How the TSA answers (the default: a good token from the good certificate). */
export interface TsaBehaviour {
  readonly certificate?: TsaCertificateKind;
  readonly fault?: TokenFault;
  /** Added to the TSA's clock for genTime (a TSA whose clock is off, or a replayed old token). */
  readonly clockOffsetMs?: number;
  /** Answer PKIStatus `rejection` (2) or `waiting` (3) without a token. */
  readonly refuse?: 2 | 3;
  /** Answer this HTTP status with an empty body. */
  readonly httpStatus?: number;
  /** Answer 200 with this media type instead of `application/timestamp-reply`. */
  readonly contentType?: string;
}

export interface TestTsa {
  /** `http://127.0.0.1:<port>/tsa`. */
  readonly url: string;
  readonly pki: TsaPki;
  /** The PEM of the TSA root: what receivers configure as TSA anchors. */
  readonly anchorsPem: string;
  /** Requests answered so far (any outcome). */
  readonly requests: number;
  /** From now on, answer like this. */
  behave(behaviour: TsaBehaviour): void;
  /** A token made directly (no HTTP) over `imprint` (a SHA-256 hash), as the TSA behaves now. */
  tokenFor(imprint: Uint8Array): Promise<Uint8Array>;
  close(): Promise<void>;
}

const MAX_QUERY_BYTES = 16 * 1024;

async function readBody(request: IncomingMessage): Promise<Uint8Array | undefined> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of request) {
    total += (chunk as Buffer).length;
    if (total > MAX_QUERY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return new Uint8Array(Buffer.concat(chunks));
}

export async function startTestTsa(): Promise<TestTsa> {
  const pki = await makeTsaPki();
  let behaviour: TsaBehaviour = {};
  let requests = 0;
  let serial = 1;

  const sign = (imprint: Uint8Array, nonce: Parameters<typeof makeToken>[0]['nonce']) => {
    const certificate: TestCert = pki.certificates[behaviour.certificate ?? 'good'];
    return makeToken({
      imprint,
      nonce,
      certificate,
      genTime: new Date(Date.now() + (behaviour.clockOffsetMs ?? 0)),
      fault: behaviour.fault ?? 'none',
      serial: serial++,
    });
  };

  const server: Server = createServer((request, response) => {
    void (async () => {
      requests++;
      const type = request.headers['content-type']?.split(';')[0]?.trim();
      const body = request.method === 'POST' ? await readBody(request) : undefined;
      if (type !== 'application/timestamp-query' || body === undefined) {
        response.writeHead(400).end();
        return;
      }
      if (behaviour.httpStatus !== undefined) {
        response.writeHead(behaviour.httpStatus).end();
        return;
      }
      let query: ReturnType<typeof readQuery>;
      try {
        query = readQuery(body);
      } catch {
        response.writeHead(200, { 'content-type': 'application/timestamp-reply' });
        response.end(makeReply(undefined, pkijs.PKIStatus.rejection));
        return;
      }
      const reply =
        behaviour.refuse !== undefined
          ? makeReply(undefined, behaviour.refuse)
          : makeReply(await sign(query.imprint, query.nonce));
      response.writeHead(200, { 'content-type': behaviour.contentType ?? 'application/timestamp-reply' });
      response.end(reply);
    })().catch(() => {
      if (!response.headersSent) response.writeHead(500);
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/tsa`,
    pki,
    anchorsPem: pki.root.pem,
    get requests() {
      return requests;
    },
    behave(next) {
      behaviour = next;
    },
    tokenFor: (imprint) => sign(imprint, undefined),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((e) => (e ? reject(e) : resolve()));
      }),
  };
}
