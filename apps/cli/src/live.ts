// Live connections to a relay: the first connection is retried a few times with backoff (a
// progress line on a terminal says so), later drops are the SDK's to retry (the state is shown).
// Only network failures are retried; a relay that answers "no" is an error at once.
import { tlsFailureOf, type WmpClient } from '@wmp/client-sdk';
import { connect, Mailbox } from '@wmp/client-sdk/node';
import { ReconnectFailedError, ReconnectPolicy, reconnect } from '@wmp/transports';
import type { CommandContext, OptionSpec } from './command.js';
import { NotFoundError, UnreachableError } from './errors.js';
import type { Progress } from './progress.js';
import { ownConnection, type SessionChoice } from './registered-session.js';
import { tlsOptions } from './tls.js';
import { tlsCliError } from './tls-errors.js';
import { isUnreachable, UNREACHABLE_HINT, unreachableCodeOf } from './to-cli-error.js';

/** `--relay <url>` of the live commands. */
export const liveRelayOption: OptionSpec = {
  kind: 'url',
  help: 'the relay to connect to',
  default: 'the first relay on your card',
};

/** `--retries <n>` of the live commands. */
export const retriesOption: OptionSpec = {
  kind: 'int',
  min: 0,
  max: 20,
  default: '3',
  help: 'how often to retry a relay that cannot be reached (backoff up to 30 s; for a drop later: 10 times)',
};

/** The relay of a live command: `--relay`, else the REPL's, else the first relay on your card. */
export async function liveRelay(ctx: CommandContext): Promise<string> {
  const given = ctx.options.relay;
  if (typeof given === 'string') return given;
  if (Array.isArray(given) && given.length > 0) return given[0]!;
  if (ctx.live) return ctx.live.relay;
  const card = await new Mailbox({ identity: await ctx.home.identity(), store: ctx.home.store() }).card();
  if (card) return card.relays[0]!;
  throw new NotFoundError(
    'no relay given and you have no card naming one',
    'Give the relay: --relay <url> (or publish your card with one: wmp card publish --relay <url>)',
  );
}

/**
 * Connects the home's identity to `relay`, retrying unreachable relays `retries` times. With
 * `receive`, asks the relay once more for everything not yet acknowledged (see below); with
 * `session`, on the session it names (the evidence session) and with its TSA.
 */
export async function connectLive(
  ctx: CommandContext,
  relay: string,
  options: { receive?: boolean; prepare?: (client: WmpClient) => Promise<void>; session?: SessionChoice } = {},
): Promise<WmpClient> {
  const client = await dial(ctx, relay, options.session ?? {});
  if (options.receive) {
    // The SDK wires a session restored from the store only after its resume succeeded, so what
    // the relay replays right after the resume answer can be missed in a new process. A
    // register makes the relay replay everything unacknowledged again (deduplicated by the SDK).
    try {
      // First what reads the replay (groups restore their decryption), then the replay itself.
      await options.prepare?.(client);
      await client.request('wmp.relay.register', {}, { signal: ctx.signal });
    } catch (error) {
      await client.close();
      throw error;
    }
  }
  return client;
}

async function dial(ctx: CommandContext, relay: string, session: SessionChoice): Promise<WmpClient> {
  const identity = await ctx.home.identity();
  const tls = await tlsOptions(ctx, identity);
  const retries = (ctx.options.retries as number | undefined) ?? 3;
  const attempt = () =>
    connect(relay, {
      identity,
      store: ctx.home.store(),
      ...session,
      tls,
      x509Auth: ctx.tlsFlags.mtls === true ? 'mtls' : 'x5c',
      // A drop later is retried by the SDK: 1 s doubling to 30 s, 10 attempts.
      reconnect: { initialDelayMs: 1000, maxDelayMs: 30_000, maxAttempts: 10 },
    });
  let last: unknown;
  const unreachable = () =>
    new UnreachableError(
      `relay unreachable: ${relay} (${unreachableCodeOf(last)}${retries > 0 ? `; ${retries + 1} attempts` : ''})`,
      UNREACHABLE_HINT,
      { relay, cause: unreachableCodeOf(last) },
    );
  try {
    return await attempt();
  } catch (error) {
    throwTls(error, relay);
    if (ctx.signal.aborted || !isUnreachable(error)) throw error;
    last = error;
    if (retries === 0) throw unreachable();
  }
  let progress: Progress | undefined;
  try {
    // The retries wait like the SDK's reconnects (jittered backoff), only shorter at first.
    return await reconnect(
      attempt,
      new ReconnectPolicy({ initialDelayMs: 500, maxDelayMs: 30_000, maxAttempts: retries }),
      {
        signal: ctx.signal,
        isRetryable: isUnreachable,
        onRetry: ({ attempt: n, delayMs, error }) => {
          if (error !== undefined) last = error;
          progress ??= ctx.out.progress(`cannot reach ${relay}; retrying`);
          progress.update(`(attempt ${n + 1} of ${retries + 1} in ${(delayMs / 1000).toFixed(1)} s)`);
        },
      },
    );
  } catch (error) {
    throwTls(error, relay);
    if (error instanceof ReconnectFailedError) {
      last = error.cause ?? last;
      throw unreachable();
    }
    throw error;
  } finally {
    progress?.done();
  }
}

/** A TLS failure as the CLI error that names `relay` (it is not retried: it fails the same way again). */
function throwTls(error: unknown, relay: string): void {
  const tls = tlsFailureOf(error);
  if (tls) throw tlsCliError(tls, relay);
}

/** Shows connection drops and reconnections of a long-running client; resolves when it closes for good. */
export function followState(ctx: CommandContext, client: WmpClient, relay: string): Promise<unknown> {
  let progress: Progress | undefined;
  return new Promise((resolve) => {
    client.on('state', (change) => {
      if (change.state === 'reconnecting') {
        if (!progress) ctx.out.warn(`lost the connection to ${relay}; reconnecting`, 'reconnecting');
        progress ??= ctx.out.progress(`reconnecting to ${relay}`);
        if (change.attempt !== undefined) progress.update(`(attempt ${change.attempt})`);
      } else if (change.state === 'connected') {
        progress?.done();
        progress = undefined;
        ctx.out.note(`reconnected to ${relay}`);
      } else if (change.state === 'closed') {
        progress?.done();
        resolve(change.error);
      }
    });
  });
}

/**
 * Runs `fn` with the REPL's client, or with a new connection that is closed afterwards (always
 * one of its own for the evidence session or a TSA: the REPL's is the plain session without).
 */
export async function withClient<T>(
  ctx: CommandContext,
  fn: (client: WmpClient, relay: string) => Promise<T>,
  session?: SessionChoice,
): Promise<T> {
  const relay = await liveRelay(ctx);
  if (ctx.live && ctx.live.relay === relay && !ownConnection(session)) return fn(ctx.live.client, relay);
  const client = await connectLive(ctx, relay, session ? { session } : {});
  try {
    return await fn(client, relay);
  } finally {
    await client.close();
  }
}
