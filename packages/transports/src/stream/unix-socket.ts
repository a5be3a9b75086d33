import { chmod, lstat, mkdir, stat, unlink } from 'node:fs/promises';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { TransportError } from '../errors.js';
import { NdjsonReadBuffer, serializeNdjson } from '../framing/ndjson.js';
import { StreamTransport } from './stream-transport.js';

export type UnixSocketErrorCode =
  | 'ERR_INSECURE_DIRECTORY'
  | 'ERR_NO_RUNTIME_DIR'
  | 'ERR_UNSUPPORTED_PLATFORM'
  | 'ERR_INVALID_APP_NAME'
  | 'ERR_PATH_TOO_LONG'
  | 'ERR_ADDRESS_IN_USE'
  | 'ERR_NOT_A_SOCKET'
  | 'ERR_TOO_MANY_CONNECTIONS';

/** A Unix socket could not be set up or a connection was refused. `path` says where, when known. */
export class UnixSocketError extends TransportError {
  declare readonly code: UnixSocketErrorCode;
  readonly path: string | undefined;
  constructor(code: UnixSocketErrorCode, message: string, path?: string) {
    super(code, message);
    this.name = 'UnixSocketError';
    this.path = path;
  }
}

export interface UnixSocketTransportOptions {
  /** Longest line accepted, in bytes. Default 1 MiB. */
  readonly maxLineBytes?: number;
  /** How long `close()` waits for the peer to close its side before destroying the socket. */
  readonly closeTimeoutMs?: number;
}

/** WMP over one Unix domain socket connection (transport spec §5.4): NDJSON, as over stdio. */
export class UnixSocketTransport extends StreamTransport {
  readonly socket: Socket;

  constructor(socket: Socket, options: UnixSocketTransportOptions = {}) {
    const reader = new NdjsonReadBuffer(
      options.maxLineBytes === undefined ? {} : { maxLineBytes: options.maxLineBytes },
    );
    super({
      readable: socket,
      writable: socket,
      reader,
      encode: serializeNdjson,
      ownReadable: true,
      ownWritable: true,
      maxMessageBytes: reader.maxLineBytes,
      ...(options.closeTimeoutMs === undefined ? {} : { closeTimeoutMs: options.closeTimeoutMs }),
    });
    this.socket = socket;
  }
}

export interface SocketPathEnvironment {
  readonly platform?: NodeJS.Platform;
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly homedir?: string;
}

const APP_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * The spec's socket path for `app` (§5.4): `$XDG_RUNTIME_DIR/wmp/<app>.sock` on Linux (and other
 * Unixes that set it), `~/Library/Application Support/wmp/<app>.sock` on macOS. Without
 * XDG_RUNTIME_DIR there is no per-user private directory to fall back on safely, so this throws
 * rather than guess (pass an explicit path instead).
 */
export function defaultSocketPath(app: string, environment: SocketPathEnvironment = {}): string {
  if (!APP_NAME.test(app)) throw new UnixSocketError('ERR_INVALID_APP_NAME', 'invalid application name');
  const platform = environment.platform ?? process.platform;
  const env = environment.env ?? process.env;
  if (platform === 'win32') throw new UnixSocketError('ERR_UNSUPPORTED_PLATFORM', 'no Unix socket path on Windows');
  if (platform === 'darwin') {
    return join(environment.homedir ?? homedir(), 'Library', 'Application Support', 'wmp', `${app}.sock`);
  }
  const runtime = env['XDG_RUNTIME_DIR'];
  if (!runtime?.startsWith('/')) throw new UnixSocketError('ERR_NO_RUNTIME_DIR', 'XDG_RUNTIME_DIR is not set');
  return join(runtime, 'wmp', `${app}.sock`);
}

function currentUid(): number {
  if (typeof process.getuid !== 'function') {
    throw new UnixSocketError('ERR_UNSUPPORTED_PLATFORM', 'Unix sockets need a POSIX platform');
  }
  return process.getuid();
}

const GROUP_OR_OTHER = 0o077;
const WRITABLE_BY_GROUP_OR_OTHER = 0o022;
const STICKY = 0o1000;

/**
 * Makes `dir` a directory only this user can use (mode 0700), creating it and any missing parents
 * with mode 0700.
 *
 * What cannot be made safe is refused: a directory another user could write to (they may already
 * have planted a symlink inside), one owned by someone else, a symlink, and any ancestor that
 * another user could write to without the sticky bit (they could rename our directory away and
 * put their own in its place) or that belongs to another user than us or root. What can be made
 * safe is repaired: a directory of ours that others may only read is chmod-ed to 0700. Ancestors
 * that others may read are fine (macOS's Application Support is 0755): reading lets nobody in.
 */
export async function ensurePrivateDirectory(dir: string): Promise<void> {
  const uid = currentUid();
  const insecure = (why: string, at: string) => new UnixSocketError('ERR_INSECURE_DIRECTORY', why, at);

  for (let at = dirname(dir); ; at = dirname(at)) {
    const s = await statOrUndefined(at);
    if (s !== undefined) {
      if (!s.isDirectory()) throw insecure('not a directory', at);
      if (s.uid !== uid && s.uid !== 0) throw insecure('directory belongs to another user', at);
      if ((s.mode & WRITABLE_BY_GROUP_OR_OTHER) !== 0 && (s.mode & STICKY) === 0) {
        throw insecure('parent directory is group or world writable', at);
      }
    }
    if (dirname(at) === at) break;
  }
  await mkdir(dirname(dir), { recursive: true, mode: 0o700 });

  let d = await lstatOrUndefined(dir);
  if (d === undefined) {
    await mkdir(dir, { mode: 0o700 });
    await chmod(dir, 0o700); // the umask may have taken bits off; make the mode exact
    d = await lstat(dir);
  }
  if (d.isSymbolicLink() || !d.isDirectory()) throw insecure('not a directory', dir);
  if (d.uid !== uid) throw insecure('directory belongs to another user', dir);
  if ((d.mode & WRITABLE_BY_GROUP_OR_OTHER) !== 0) throw insecure('directory is group or world writable', dir);
  if ((d.mode & GROUP_OR_OTHER) !== 0) await chmod(dir, 0o700);
}

async function statOrUndefined(path: string) {
  try {
    return await stat(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

async function lstatOrUndefined(path: string) {
  try {
    return await lstat(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/** sun_path is 108 bytes on Linux and 104 on macOS, NUL included. */
function checkPathLength(path: string): void {
  const max = process.platform === 'linux' ? 107 : 103;
  if (Buffer.byteLength(path) > max) throw new UnixSocketError('ERR_PATH_TOO_LONG', 'socket path too long', path);
}

/**
 * Removes a socket file left behind by a server that died, but never a live server's socket
 * (probed by connecting) and never a file that is not a socket.
 */
async function removeStaleSocket(path: string): Promise<void> {
  const s = await lstatOrUndefined(path);
  if (s === undefined) return;
  if (!s.isSocket()) throw new UnixSocketError('ERR_NOT_A_SOCKET', 'path exists and is not a socket', path);
  const live = await new Promise<boolean>((done) => {
    const probe = createConnection({ path });
    probe.once('connect', () => {
      probe.destroy();
      done(true);
    });
    probe.once('error', () => done(false));
  });
  if (live) throw new UnixSocketError('ERR_ADDRESS_IN_USE', 'another server is listening on this socket', path);
  await unlink(path).catch((e: NodeJS.ErrnoException) => {
    if (e.code !== 'ENOENT') throw e;
  });
}

export interface UnixSocketServerOptions {
  /** The socket file. Its directory is made private (see `ensurePrivateDirectory`). */
  readonly path: string;
  /**
   * Called once per accepted connection with a transport that is not started yet: set its
   * handlers, then call `start()` (no data is read before that).
   */
  readonly onTransport: (transport: UnixSocketTransport) => void;
  /** Connections open at once; more are closed on arrival. Default 64. */
  readonly maxConnections?: number;
  readonly maxLineBytes?: number;
  /** Refused connections, a throwing `onTransport`, server errors after listening. */
  readonly onerror?: (error: Error) => void;
}

export const DEFAULT_MAX_UNIX_CONNECTIONS = 64;

/** A listening Unix socket. One `UnixSocketTransport` per connection. */
export class UnixSocketServer {
  readonly path: string;
  private readonly server: Server;
  private readonly transports: Set<UnixSocketTransport>;
  private readonly inode: number;
  private closing: Promise<void> | undefined;

  /** Use `listenUnixSocket`. */
  constructor(path: string, server: Server, inode: number, transports: Set<UnixSocketTransport>) {
    this.path = path;
    this.server = server;
    this.inode = inode;
    this.transports = transports;
  }

  /** Connections currently open. */
  get connections(): number {
    return this.transports.size;
  }

  /** Stops accepting, closes every connection and removes the socket file. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const closed = new Promise<void>((done) => this.server.close(() => done()));
      await Promise.all([...this.transports].map((t) => t.close()));
      await closed;
      // libuv unlinks the file on close; this covers runtimes that do not, and never touches a
      // socket another server has put at the same path since.
      const now = await lstatOrUndefined(this.path);
      if (now?.isSocket() && now.ino === this.inode) await unlink(this.path).catch(() => {});
    })();
    return this.closing;
  }
}

/** Listens on a Unix socket in a private directory, replacing a stale socket file. */
export async function listenUnixSocket(options: UnixSocketServerOptions): Promise<UnixSocketServer> {
  const path = resolve(options.path);
  const max = options.maxConnections ?? DEFAULT_MAX_UNIX_CONNECTIONS;
  if (!(Number.isSafeInteger(max) && max >= 1)) throw new RangeError('maxConnections must be a positive integer');
  checkPathLength(path);
  await ensurePrivateDirectory(dirname(path));
  await removeStaleSocket(path);

  const report = (error: Error) => {
    try {
      options.onerror?.(error);
    } catch {
      // nowhere left to report
    }
  };
  const transports = new Set<UnixSocketTransport>();
  const server = createServer((socket) => {
    if (transports.size >= max) {
      socket.on('error', () => {});
      socket.destroy();
      report(new UnixSocketError('ERR_TOO_MANY_CONNECTIONS', 'too many connections', path));
      return;
    }
    const transport = new UnixSocketTransport(
      socket,
      options.maxLineBytes === undefined ? {} : { maxLineBytes: options.maxLineBytes },
    );
    transports.add(transport);
    // Counted by the socket, not the transport: a transport that is never started still holds
    // its connection until the socket closes.
    socket.once('close', () => transports.delete(transport));
    try {
      options.onTransport(transport);
    } catch (e) {
      report(e instanceof Error ? e : new Error('onTransport threw', { cause: e }));
      void transport.close();
    }
  });

  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(path, () => {
      server.off('error', fail);
      done();
    });
  });
  server.on('error', report);
  // The directory already keeps others out; 0600 on the socket itself costs nothing.
  await chmod(path, 0o600);
  const { ino } = await lstat(path);
  return new UnixSocketServer(path, server, ino, transports);
}

/** Connects to a Unix socket server and returns a started transport. Set handlers right away. */
export async function connectUnixSocket(
  path: string,
  options: UnixSocketTransportOptions = {},
): Promise<UnixSocketTransport> {
  const socket = createConnection({ path });
  await new Promise<void>((done, fail) => {
    const onError = (e: Error) => {
      socket.off('connect', onConnect);
      fail(e);
    };
    const onConnect = () => {
      socket.off('error', onError);
      done();
    };
    socket.once('connect', onConnect);
    socket.once('error', onError);
  });
  // Not started: the caller (a Peer) sets its handlers first, so no frame can arrive unheard.
  return new UnixSocketTransport(socket, options);
}
