import { createClient, ErrorReply, type RedisClientType } from '@redis/client';
import { RelayServerError } from '../../errors.js';
import type { Logger } from '../../relay/support/logger.js';
import type { CoordinationHealth } from '../contracts/coordination.js';
import type { Script } from './scripts.js';

export type RedisClient = RedisClientType;

/**
 * Why a Redis call failed, as the adapters see it: `unavailable` (down, unreachable, too slow, or
 * an unexpected refusal) or `full` (the server is at `maxmemory` and refuses writes, OOM).
 * Internal: every adapter maps it to its contract's answer.
 */
export class RedisFailure extends RelayServerError {
  declare readonly code: 'ERR_REDIS_UNAVAILABLE' | 'ERR_REDIS_FULL';
  readonly kind: 'unavailable' | 'full';
  constructor(kind: 'unavailable' | 'full', cause: unknown) {
    super(kind === 'full' ? 'ERR_REDIS_FULL' : 'ERR_REDIS_UNAVAILABLE', `redis ${kind}`, { cause });
    this.name = 'RedisFailure';
    this.kind = kind;
  }
}

export interface LinkOptions {
  readonly url: string;
  /** A command not answered within this is failed (and the link is degraded); default 1000 ms. */
  readonly commandTimeoutMs?: number;
  /** One connection attempt; default 2000 ms. */
  readonly connectTimeoutMs?: number;
  /** Reconnect backoff cap; default 1000 ms (from 20 ms, doubling, with jitter). */
  readonly maxReconnectDelayMs?: number;
  /**
   * A PING this often on each connection, and a probe PING on the command connection with the
   * command deadline: finds a dead or hung server (degraded within about this plus the command
   * timeout, on an idle node too), ends a degraded spell; default 1000 ms.
   */
  readonly pingIntervalMs?: number;
  readonly logger?: Logger;
  /** Commands written or waiting per connection at most; default 100,000. */
  readonly maxQueuedCommands?: number;
  /** `CLIENT SETNAME` of the two connections (`<name>:cmd`, `<name>:sub`), seen in `CLIENT LIST`. */
  readonly clientName?: string;
}

type Which = 'commands' | 'subscriber';

/**
 * The two connections of a node to Redis: one for commands and scripts, one for sharded
 * subscriptions (a subscribed RESP connection is kept for pushes). Neither queues commands while
 * disconnected (`disableOfflineQueue`): a call during an outage fails at once, so callers answer
 * (503, a local fallback) instead of waiting. Both reconnect by themselves, forever, with backoff;
 * node-redis restores confirmed subscriptions before `ready`.
 */
export class RedisLink {
  readonly commands: RedisClient;
  readonly subscriber: RedisClient;
  readonly #logger: Logger | undefined;
  readonly #ready = { commands: new Set<() => void>(), subscriber: new Set<() => void>() };
  readonly #healthListeners = new Set<(health: CoordinationHealth) => void>();
  /** A command failed for want of the server since the last sign of life. */
  #failing = false;
  #down = false;
  #health: CoordinationHealth = 'degraded';
  #closed = false;
  readonly #timeoutMs: number;
  /** The probe's PING has not been answered yet (a hung server gets one at a time, not one per tick). */
  #probing = false;
  readonly #probeTimer: NodeJS.Timeout;

  constructor(options: LinkOptions) {
    this.#timeoutMs = options.commandTimeoutMs ?? 1000;
    const maxDelay = options.maxReconnectDelayMs ?? 1000;
    const base = {
      url: options.url,
      disableOfflineQueue: true,
      // Commands waiting for a hung server are bounded too ("The queue is full" is unavailable).
      commandsQueueMaxLength: options.maxQueuedCommands ?? 100_000,
      pingInterval: options.pingIntervalMs ?? 1000,
      // 0: none of node-redis's own (its default is 5 s, an AbortSignal per command); `call` has ours.
      commandOptions: { timeout: 0 },
      socket: {
        connectTimeout: options.connectTimeoutMs ?? 2000,
        reconnectStrategy: (retries: number) =>
          Math.min(maxDelay, 20 * 2 ** Math.min(retries, 16)) + Math.random() * 20,
      },
    };
    this.#logger = options.logger;
    const name = (role: string) =>
      options.clientName === undefined ? {} : { name: `${options.clientName.replace(/[^\w.:-]/g, '_')}:${role}` };
    this.commands = createClient({ ...base, ...name('cmd') });
    this.subscriber = createClient({ ...base, ...name('sub') });
    this.#attach('commands', this.commands);
    this.#attach('subscriber', this.subscriber);
    // node-redis's own PING has no deadline: a hung server (SIGSTOP, a frozen VM) keeps it waiting
    // while the socket stays open, so without this an idle node would say `ok` until TCP gives up.
    this.#probeTimer = setInterval(() => this.#probe(), options.pingIntervalMs ?? 1000);
    this.#probeTimer.unref();
  }

  /** One PING through `call` (its deadline marks the link failing), unless the last is unanswered. */
  #probe(): void {
    if (this.#probing || this.#closed || !this.commands.isReady) return;
    this.#probing = true;
    this.call((client) => {
      const ping = client.ping();
      ping
        .catch(() => undefined)
        .finally(() => {
          this.#probing = false;
        });
      return ping;
    }).catch(() => undefined);
  }

  #attach(which: Which, client: RedisClient): void {
    // node-redis throws from an emitter with no 'error' listener: this one must stay.
    client.on('error', (error: unknown) => {
      if (which === 'commands' && isUnavailable(error)) this.#failing = true;
      this.#update(error);
    });
    client.on('end', () => this.#update());
    client.on('reconnecting', () => this.#update());
    client.on('ping-interval', () => {
      if (which === 'commands') this.#failing = false;
      this.#update();
    });
    client.on('ready', () => {
      if (which === 'commands') this.#failing = false;
      this.#update();
      for (const listener of [...this.#ready[which]]) listener();
    });
  }

  /** Connects both; resolves when both are ready, or rejects (both closed) after `timeoutMs`. */
  async start(timeoutMs: number): Promise<void> {
    const connecting = Promise.all([this.commands.connect(), this.subscriber.connect()]);
    connecting.catch(() => {});
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('redis did not answer')), timeoutMs);
    });
    try {
      await Promise.race([connecting, timeout]);
    } catch (error) {
      await this.close();
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Connects both in the background (a node that starts degraded and catches up). */
  startInBackground(): void {
    this.commands.connect().catch(() => {});
    this.subscriber.connect().catch(() => {});
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Whether commands may be worth sending now (connected and not failing). */
  get usable(): boolean {
    return !this.#closed && this.commands.isReady && !this.#failing;
  }

  health(): CoordinationHealth {
    return this.#health;
  }

  onHealth(listener: (health: CoordinationHealth) => void): () => void {
    this.#healthListeners.add(listener);
    return () => this.#healthListeners.delete(listener);
  }

  /** `listener` runs every time that connection is (again) ready, subscriptions restored. */
  onReady(which: Which, listener: () => void): () => void {
    this.#ready[which].add(listener);
    return () => this.#ready[which].delete(listener);
  }

  /** Runs `fn` on the command connection; any failure is a `RedisFailure`. */
  async call<T>(fn: (client: RedisClient) => Promise<T>): Promise<T> {
    if (this.#closed) throw new RedisFailure('unavailable', new Error('closed'));
    try {
      // The only deadline: node-redis's own command timeout ends only the wait to be written
      // (a hung server never answers one that was), and costs an AbortSignal per command, a
      // few per cent of a busy node's CPU. A late answer is dropped.
      const result = await withDeadline(fn(this.commands), this.#timeoutMs);
      if (this.#failing) {
        this.#failing = false;
        this.#update();
      }
      return result;
    } catch (error) {
      const kind = isFull(error) ? 'full' : 'unavailable';
      if (kind === 'unavailable' && isUnavailable(error) && !this.#failing) {
        this.#failing = true;
        this.#update(error);
      } else if (kind === 'unavailable' && !isUnavailable(error)) {
        // A refusal we do not expect (a script error, a missing permission): worth a log line.
        this.#logger?.error('coordination.redis_refused', { error: errorName(error) });
      }
      throw new RedisFailure(kind, error);
    }
  }

  /** `promise`, or a `RedisDeadlineError` after the command timeout (for calls not made through `call`). */
  bounded<T>(promise: Promise<T>): Promise<T> {
    return withDeadline(promise, this.#timeoutMs);
  }

  /** EVALSHA, and EVAL when the server does not know the script (it restarted). */
  async script(script: Script, keys: string[], args: string[]): Promise<unknown> {
    return this.call(async (client) => {
      try {
        return await client.evalSha(script.sha1, { keys, arguments: args });
      } catch (error) {
        if (!(error instanceof ErrorReply) || !error.message.startsWith('NOSCRIPT')) throw error;
        return await client.eval(script.source, { keys, arguments: args });
      }
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#probeTimer);
    for (const client of [this.commands, this.subscriber]) {
      try {
        if (client.isReady) await withDeadline(client.close(), this.#timeoutMs);
        else client.destroy();
      } catch {
        client.destroy();
      }
    }
    this.#update();
  }

  /** Destroys both connections at once, as a crash would (tests; nothing is withdrawn). */
  destroy(): void {
    this.#closed = true;
    clearInterval(this.#probeTimer);
    this.commands.destroy();
    this.subscriber.destroy();
    this.#update();
  }

  #update(error?: unknown): void {
    const down = this.#closed || !this.commands.isReady || !this.subscriber.isReady;
    const health: CoordinationHealth = down || this.#failing ? 'degraded' : 'ok';
    if (down !== this.#down && !this.#closed) {
      // One line per change of state, never one per command (docs/architecture.md, "Secrets").
      if (down) this.#logger?.warn('coordination.redis_down', error === undefined ? {} : { error: errorName(error) });
      else this.#logger?.info('coordination.redis_up');
    }
    this.#down = down;
    if (health === this.#health) return;
    this.#health = health;
    for (const listener of [...this.#healthListeners]) listener(health);
  }
}

/** The server is at `maxmemory` (noeviction): it refuses writes. */
function isFull(error: unknown): boolean {
  return error instanceof ErrorReply && error.message.startsWith('OOM');
}

/** Not an answer from the server: no connection, a timeout, a closed client. */
function isUnavailable(error: unknown): boolean {
  return !(error instanceof ErrorReply);
}

function errorName(error: unknown): string {
  if (error instanceof ErrorReply) return error.message.split(' ', 1)[0] ?? 'ErrorReply';
  return error instanceof Error ? error.name : 'unknown';
}

/** The server did not answer within the command timeout. */
export class RedisDeadlineError extends RelayServerError {
  declare readonly code: 'ERR_REDIS_DEADLINE';
  constructor() {
    super('ERR_REDIS_DEADLINE', 'redis did not answer in time');
    this.name = 'RedisDeadlineError';
  }
}

async function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  promise.catch(() => {});
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new RedisDeadlineError()), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
