#!/usr/bin/env node
// wmp-relay: parse flags and environment, start the relay, print its URL, stop on SIGTERM/SIGINT.
// Logs are JSON lines on stderr (never addresses or message content); stdout gets exactly one
// line, `wmp-relay listening on <url>`, once the relay accepts connections.
import { readFileSync } from 'node:fs';
import { createJsonLogger } from '@wmp/relay-server';
import { runAdmin } from './admin/admin-main.js';
import { defaultNodeId } from './backend.js';
import { EXIT_USAGE, parseConfig } from './config.js';
import { startRelayApp } from './server.js';
import { startupUsageError } from './startup-errors.js';
import { RELAY_VERSION } from './version.js';

/** How long a graceful stop may take before the process gives up and exits 1. */
const SHUTDOWN_TIMEOUT_MS = 8_000;

if (process.argv[2] === 'admin') {
  const code = await runAdmin(process.argv.slice(3), process.env, {
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
    cwd: process.cwd(),
    version: RELAY_VERSION,
  });
  // Written out before exiting (a pipe may still hold the answer).
  process.stdout.write('', () => process.exit(code));
  await new Promise(() => {});
}

const parsed = parseConfig(process.argv.slice(2), process.env, { readFile: (path) => readFileSync(path, 'utf8') });
if (parsed.kind === 'version') {
  process.stdout.write(`wmp-relay ${RELAY_VERSION}\n`);
  process.exit(0);
}
if (parsed.kind === 'help') {
  process.stdout.write(parsed.text);
  process.exit(0);
}
if (parsed.kind === 'error') {
  process.stderr.write(`wmp-relay: ${parsed.message}\nRun wmp-relay --help for the options.\n`);
  process.exit(EXIT_USAGE);
}
const { config } = parsed;
const nodeId = config.nodeId ?? defaultNodeId();
// Every line names the node (a cluster's logs are read together).
const logger = createJsonLogger({
  level: config.logLevel,
  write: (line) => process.stderr.write(line),
  fields: { node_id: nodeId },
});
// The log is JSON lines only (docs/architecture.md, "Secrets"): a library that writes to the
// console (the HTTP adapter does, for a client that went away mid-response) gets one JSON line with
// no text of its own.
for (const level of ['log', 'info', 'debug', 'warn', 'error'] as const) {
  console[level] = (...args: unknown[]) => {
    const name = args.find((a): a is Error => a instanceof Error)?.name;
    logger.debug('library.console', { level, ...(name === undefined ? {} : { error: name }) });
  };
}

// Signals are handled from the start: one that arrives while the relay is still starting stops it
// once it has started (the default action would kill it without closing the database).
let running: Awaited<ReturnType<typeof startRelayApp>> | undefined;
let stopping: NodeJS.Signals | undefined;
function stop(signal: NodeJS.Signals): void {
  if (stopping !== undefined) {
    // A second signal while stopping: give up waiting.
    logger.warn('relay.forced_exit', { signal });
    process.exit(1);
  }
  stopping = signal;
  if (running !== undefined) shutDown(running, signal);
}
function shutDown(relay: NonNullable<typeof running>, signal: NodeJS.Signals): void {
  logger.info('relay.stopping', { signal });
  const timer = setTimeout(() => {
    logger.error('relay.stop_timeout', { ms: SHUTDOWN_TIMEOUT_MS });
    process.exit(1);
  }, SHUTDOWN_TIMEOUT_MS);
  timer.unref();
  relay.close().then(
    () => {
      logger.info('relay.stopped');
      process.exit(0);
    },
    (error: unknown) => {
      logger.error('relay.stop_failed', { error: (error as Error)?.name ?? 'unknown' });
      process.exit(1);
    },
  );
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

try {
  running = await startRelayApp(config, { logger, nodeId });
} catch (error) {
  const e = error as NodeJS.ErrnoException;
  logger.error('relay.start_failed', { error: e.name, code: e.code, message: e.message });
  // A setting that cannot work (the data directory in use, a database that is not there) is a
  // usage error: exit 2, naming the setting.
  const usage = startupUsageError(e, config);
  process.stderr.write(`wmp-relay: ${usage ?? `could not start: ${e.message}`}\n`);
  process.exit(usage === undefined ? 1 : EXIT_USAGE);
}
logger.info('relay.started', {
  url: running.url,
  relay_id: running.id,
  store: running.store,
  box: config.directory ? 'directory' : 'relay-only',
});
process.stdout.write(`wmp-relay listening on ${running.url}\n`);
if (stopping !== undefined) shutDown(running, stopping);
