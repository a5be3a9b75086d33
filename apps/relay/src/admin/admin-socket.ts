// The admin socket: how `wmp-relay admin` reaches a relay that holds its data directory. A Unix
// socket in the data directory (itself 0700), made 0600: only the relay's own user connects. One
// JSON request line, one JSON answer line (admin-protocol.ts); requests are bounded in size and
// time, and the answer names no input.
import { chmodSync, unlinkSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import type { Logger } from '@wmp/relay-server';
import { AdminError, adminErrorOf } from './admin-errors.js';
import type { AdminTarget, Operation } from './admin-operations.js';
import {
  type AdminRequest,
  decodeAnswer,
  decodeRequest,
  encodeAnswer,
  encodeRequest,
  MAX_ANSWER_BYTES,
  MAX_REQUEST_BYTES,
} from './admin-protocol.js';

/** The socket's name inside the data directory. */
export const ADMIN_SOCKET = 'admin.sock';
/** A request must arrive within this long. */
const REQUEST_TIMEOUT_MS = 10_000;

export function adminSocketPath(dataDir: string): string {
  return join(dataDir, ADMIN_SOCKET);
}

export interface AdminServer {
  readonly path: string;
  close(): Promise<void>;
}

/** Reads one line of at most `max` bytes from `socket`. */
function readLine(socket: Socket, max: number, onLine: (line: string) => void, onError: (e: Error) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  socket.on('data', (chunk: Buffer) => {
    const end = chunk.indexOf(0x0a);
    const part = end === -1 ? chunk : chunk.subarray(0, end);
    size += part.length;
    if (size > max) {
      onError(new AdminError('usage', 'the message is too large'));
      return;
    }
    chunks.push(part);
    if (end !== -1) {
      socket.removeAllListeners('data');
      onLine(Buffer.concat(chunks).toString('utf8'));
    }
  });
}

/**
 * Listens on `<dataDir>/admin.sock` (a stale socket from a crash is replaced: the caller holds the
 * data directory's lock, so no other relay owns it) and answers each request with `operations`.
 */
export async function startAdminServer(
  dataDir: string,
  target: AdminTarget,
  operations: Readonly<Record<string, Operation>>,
  logger: Logger,
): Promise<AdminServer> {
  const path = adminSocketPath(dataDir);
  try {
    unlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.setTimeout(REQUEST_TIMEOUT_MS, () => socket.destroy());
    socket.on('error', () => socket.destroy());
    const answer = (text: string) => socket.end(text);
    readLine(
      socket,
      MAX_REQUEST_BYTES,
      (line) => {
        socket.setTimeout(0);
        void run(line).then(answer);
      },
      (error) => answer(encodeAnswer({ ok: false, error: { code: 'usage', message: error.message } })),
    );
  });
  const run = async (line: string): Promise<string> => {
    let request: AdminRequest | undefined;
    try {
      request = decodeRequest(line);
      const operation = Object.hasOwn(operations, request.command) ? operations[request.command] : undefined;
      if (operation === undefined) throw new AdminError('usage', 'unknown admin command');
      const result = await operation(target, request.args);
      logger.info('admin.command', { command: request.command, ok: true });
      return encodeAnswer({ ok: true, result });
    } catch (error) {
      const e = adminErrorOf(error);
      logger.warn('admin.command', { command: request?.command ?? 'unknown', ok: false, code: e.code });
      return encodeAnswer({ ok: false, error: { code: e.code, message: e.message } });
    }
  };
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      resolve();
    });
  });
  chmodSync(path, 0o600);
  return {
    path,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Whether a relay answers on `path`: its answer, or `undefined` when nobody listens there. */
export async function askAdminServer(path: string, request: AdminRequest): Promise<{ answer: unknown } | undefined> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(path);
    let connected = false;
    socket.once('connect', () => {
      connected = true;
      socket.write(encodeRequest(request));
      readLine(
        socket,
        MAX_ANSWER_BYTES,
        (line) => {
          socket.destroy();
          try {
            resolve({ answer: decodeAnswer(line) });
          } catch (error) {
            reject(error);
          }
        },
        (error) => {
          socket.destroy();
          reject(error);
        },
      );
    });
    socket.once('end', () => {
      if (connected) reject(new AdminError('failed', 'the relay closed the admin socket without an answer'));
    });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      // No socket, or one left by a relay that is gone: no relay answers.
      if (!connected && (error.code === 'ENOENT' || error.code === 'ECONNREFUSED')) resolve(undefined);
      else reject(new AdminError('failed', `the admin socket failed (${error.code ?? 'error'})`));
    });
  });
}
