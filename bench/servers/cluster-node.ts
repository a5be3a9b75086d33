// One node of a wmp-relay cluster for bench/relay-cluster, in its own process: the app itself
// (`startRelayApp`, PostgreSQL + Redis from the flags), argv as wmp-relay takes it and the relay
// key in WMP_RELAY_KEY. Prints its port, answers `stats` over IPC and serves until stdin closes.
import { parseConfig } from '../../apps/relay/src/config.js';
import { startRelayApp } from '../../apps/relay/src/server.js';
import { createJsonLogger } from '../../packages/relay-server/src/index.js';

const parsed = parseConfig(process.argv.slice(2), process.env);
if (parsed.kind !== 'config') throw new Error(`bad cluster node flags: ${JSON.stringify(parsed)}`);
const logger = createJsonLogger({ level: parsed.config.logLevel, write: (line) => process.stderr.write(line) });
const running = await startRelayApp(parsed.config, { logger });
const { core } = running.relay;

process.on('message', (ask: { id: number; type: string }) =>
  process.send?.({
    id: ask.id,
    routed: core.metrics.routed,
    deliveries: core.metrics.deliveries,
    errors: [...core.metrics.errors.values()].reduce((a, b) => a + b, 0),
  }),
);
process.stdout.write(`${running.port}\n`);
process.stdin.on('end', () => {
  void running.close().then(() => process.exit(0));
});
process.stdin.resume();
