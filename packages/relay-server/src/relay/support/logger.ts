/** Log levels, quietest last. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

/** Field values a log line may carry: never addresses, never message content (docs/architecture.md, "Secrets"). */
export type LogFields = Readonly<Record<string, string | number | boolean | undefined>>;

export interface Logger {
  debug(event: string, fields?: LogFields): void;
  info(event: string, fields?: LogFields): void;
  warn(event: string, fields?: LogFields): void;
  error(event: string, fields?: LogFields): void;
}

const RANK: Readonly<Record<LogLevel, number>> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

/** A logger that drops everything: the default, so tests and embedders stay quiet. */
export const silentLogger: Logger = Object.freeze({
  debug() {},
  info() {},
  warn() {},
  error() {},
});

/**
 * JSON lines (`{"time","level","event",...fields}`), one per call, written by `write` (stderr in
 * the app). Callers pass only event names and small scalar fields: the privacy rule is kept by
 * what the relay logs, and this function adds nothing from requests.
 */
export function createJsonLogger(options: {
  level?: LogLevel;
  write: (line: string) => void;
  now?: () => number;
  /** Fields on every line (a cluster node's `node_id`). */
  fields?: LogFields;
}): Logger {
  const threshold = RANK[options.level ?? 'info'];
  const now = options.now ?? Date.now;
  const base = options.fields ?? {};
  const emit = (level: Exclude<LogLevel, 'silent'>) => (event: string, fields?: LogFields) => {
    if (RANK[level] < threshold) return;
    options.write(`${JSON.stringify({ time: new Date(now()).toISOString(), level, event, ...base, ...fields })}\n`);
  };
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') };
}
