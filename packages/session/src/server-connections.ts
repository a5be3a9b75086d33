import { RateLimitedError } from '@wmp/jsonrpc-envelope';
import type { Connection } from './context.js';

export interface ServerConnectionLimits {
  readonly maxConnections?: number | undefined;
  readonly maxUnauthenticatedConnections?: number | undefined;
  readonly maxSessionsPerConnection?: number | undefined;
  readonly unauthenticatedTimeoutMs?: number | undefined;
}

/**
 * A responder's open connections and which sessions each is bound to, with the caps on them
 * (docs/architecture.md, "Bounds"): all connections, the unauthenticated ones (closed as `timeout`
 * when they stay so), and sessions per connection.
 */
export class ServerConnections {
  readonly #limits: ServerConnectionLimits;
  readonly #open = new Set<Connection>();
  /** Session id -> connections bound to it (one per device of a participant). */
  readonly #bindings = new Map<string, Set<Connection>>();
  /** Open connections with no authenticated session among them (their own cap). */
  #unauthenticated = 0;

  constructor(limits: ServerConnectionLimits) {
    this.#limits = limits;
  }

  get counts(): { readonly open: number; readonly unauthenticated: number } {
    return { open: this.#open.size, unauthenticated: this.#unauthenticated };
  }

  get all(): Connection[] {
    return [...this.#open];
  }

  /** The cap a new connection would exceed, if any (every new connection is unauthenticated). */
  refusal(): string | undefined {
    if (this.#open.size >= (this.#limits.maxConnections ?? 100_000)) return 'too many connections';
    if (this.#unauthenticated >= (this.#limits.maxUnauthenticatedConnections ?? 1_000)) {
      return 'too many unauthenticated connections';
    }
    return undefined;
  }

  add(connection: Connection): void {
    this.#open.add(connection);
    this.#unauthenticated++;
    this.#armLoginTimer(connection);
  }

  /** Every session bound to some connection. */
  get boundSessions(): IterableIterator<string> {
    return this.#bindings.keys();
  }

  /** Connections currently bound to a session. */
  of(sessionId: string): Connection[] {
    return [...(this.#bindings.get(sessionId) ?? [])];
  }

  /** -31007 when binding one more session would exceed the connection's cap. */
  checkBind(connection: Connection, sessionId: string): void {
    if (connection.sessions.has(sessionId)) return;
    if (connection.sessions.size >= (this.#limits.maxSessionsPerConnection ?? 16)) {
      throw new RateLimitedError({ reason: 'too many sessions on this connection' });
    }
  }

  bind(connection: Connection, sessionId: string, identity: string | undefined): void {
    if (connection.peer.closed) return;
    const recentIds = connection.sessions.get(sessionId)?.recentIds;
    connection.sessions.set(sessionId, recentIds === undefined ? { identity } : { identity, recentIds });
    const set = this.#bindings.get(sessionId) ?? new Set<Connection>();
    this.#bindings.set(sessionId, set);
    set.add(connection);
    this.#recount(connection);
  }

  /** The session is gone: no connection is bound to it any more. */
  unbind(sessionId: string): void {
    const set = this.#bindings.get(sessionId);
    this.#bindings.delete(sessionId);
    for (const c of set ?? []) {
      c.sessions.delete(sessionId);
      this.#recount(c);
    }
  }

  /** One connection leaves a session the others stay bound to. */
  unbindConnection(connection: Connection, sessionId: string): void {
    connection.sessions.delete(sessionId);
    this.#forget(connection, sessionId);
    this.#recount(connection);
  }

  /** The connection closed. */
  remove(connection: Connection): void {
    clearTimeout(connection.loginTimer);
    if (!this.#open.delete(connection)) return;
    if (!connection.authenticated) this.#unauthenticated--;
    for (const sessionId of connection.sessions.keys()) this.#forget(connection, sessionId);
  }

  #forget(connection: Connection, sessionId: string): void {
    const set = this.#bindings.get(sessionId);
    set?.delete(connection);
    if (set?.size === 0) this.#bindings.delete(sessionId);
  }

  /**
   * Closes the connection (as `timeout`) if it still has no authenticated session when the timer
   * fires; armed at connect and again whenever its last authenticated session goes.
   */
  #armLoginTimer(connection: Connection): void {
    clearTimeout(connection.loginTimer);
    const ms = this.#limits.unauthenticatedTimeoutMs ?? 30_000;
    if (!Number.isFinite(ms)) return; // a connection that is no network connection (a bridge)
    const timer = setTimeout(() => {
      connection.loginTimer = undefined;
      if (!connection.authenticated) void connection.peer.transport.close('timeout').catch(() => undefined);
    }, ms);
    (timer as { unref?: () => void }).unref?.();
    connection.loginTimer = timer;
  }

  /** Keeps `connection.authenticated` and the unauthenticated count in step with its bindings. */
  #recount(connection: Connection): void {
    if (!this.#open.has(connection)) return;
    let authenticated = false;
    for (const binding of connection.sessions.values()) if (binding.identity !== undefined) authenticated = true;
    if (authenticated === connection.authenticated) return;
    connection.authenticated = authenticated;
    this.#unauthenticated += authenticated ? -1 : 1;
    if (authenticated) {
      clearTimeout(connection.loginTimer);
      connection.loginTimer = undefined;
    } else this.#armLoginTimer(connection);
  }
}
