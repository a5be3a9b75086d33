// Writes apps/relay/deploy/wmp-relay.env from the option table: every variable of `wmp-relay --help`,
// commented out at its default (the sample names the data directory and public URL only). After a
// new option:  node --conditions=@wmp/source --import tsx scripts/relay-env-sample.ts > apps/relay/deploy/wmp-relay.env
import { defaultOf, envOf, OPTIONS } from '../apps/relay/src/config-options.js';

const set: Record<string, string> = {
  WMP_DATA_DIR: '/var/lib/wmp-relay',
  WMP_PUBLIC_URL: 'https://relay.example.org',
};
const lines: string[] = [
  '# wmp-relay settings as environment variables: a systemd EnvironmentFile (wmp-relay.service),',
  '# `docker run --env-file`, or `set -a; . ./wmp-relay.env; set +a` in a shell. Every variable of',
  '# `wmp-relay --help` is here, commented out at its default; uncomment what you change. A flag wins',
  '# over a variable, a variable over the --config file. Keep secrets (WMP_RELAY_KEY, passwords in',
  '# WMP_DATABASE_URL / WMP_REDIS_URL) in a file only the relay user reads (chmod 600).',
  '',
];
for (const o of OPTIONS) {
  const env = envOf(o);
  if (env === undefined) continue;
  const shown = o.target === undefined ? (o.default ?? '') : String(defaultOf(o.target));
  const value = /^(none|off|<)/.test(shown) ? '' : shown === 'on' ? 'true' : shown;
  lines.push(`# ${o.help} (default: ${shown})`);
  lines.push(env in set ? `${env}=${set[env]}` : `#${env}=${value}`);
}
lines.push('# the box mode: directory (cards routes on) or relay-only (default: directory)');
lines.push('#WMP_BOX_MODE=directory');
lines.push('# the relay key itself (64 hex digits) instead of --relay-key-file: keep it out of any shared file');
lines.push('#WMP_RELAY_KEY=');
console.log(lines.join('\n'));
