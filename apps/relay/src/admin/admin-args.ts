// `wmp-relay admin <command> [options]`: the commands, their options and where they run. Pure.
// The data directory and the database URL are the relay's own settings (--data-dir,
// --database-url and their WMP_* variables): the same names, read the same way.
import { parseArgs } from 'node:util';
import { AdminError } from './admin-errors.js';

/**
 * Where a command runs: `any` (inside the running relay, else on the files), `offline` (no relay
 * may run), `local` (in the admin process, whether a relay runs or not: it writes files the relay reads).
 */
type Where = 'any' | 'offline' | 'local';

interface CommandSpec {
  readonly usage: string;
  readonly help: string;
  readonly where: Where;
  /** Options of its own (besides --data-dir, --database-url, --json, --help). */
  readonly options: Readonly<Record<string, { readonly type: 'string' | 'boolean'; readonly help: string }>>;
  /** Words after the command (`sessions close <id>`). */
  readonly positionals?: (words: readonly string[]) => Record<string, unknown>;
}

export const COMMANDS: Readonly<Record<string, CommandSpec>> = {
  status: {
    usage: 'status',
    help: 'whether a relay runs on the data directory, its id and version',
    where: 'any',
    options: {},
  },
  queues: {
    usage: 'queues',
    help: 'queues, peer outboxes and box recipients with messages: count, bytes, oldest age',
    where: 'any',
    options: {},
  },
  purge: {
    usage: 'purge (--recipient ID | --outbox ORIGIN | --box KEY | --expired)',
    help: "empty a recipient's queue, a peer relay's outbox or a box, or remove every expired row",
    where: 'any',
    options: {
      recipient: { type: 'string', help: 'the recipient whose queue is emptied (senders get no status)' },
      outbox: { type: 'string', help: 'the peer relay origin whose outbox is emptied' },
      box: { type: 'string', help: 'the box key (multikey) whose sealed events are removed' },
      expired: {
        type: 'boolean',
        help: 'expired messages (their senders told, when the relay runs), events, cards, sessions',
      },
    },
  },
  sessions: {
    usage: 'sessions [close ID]',
    help: 'list the sessions, or close one (its connections are told, when the relay runs)',
    where: 'any',
    options: {},
    positionals: (words) => {
      if (words.length === 0) return {};
      if (words[0] === 'close' && words.length === 2) return { close: words[1] };
      throw new AdminError('usage', 'sessions takes no words but "close ID"');
    },
  },
  backup: {
    usage: 'backup --to FILE',
    help: 'a consistent copy of the SQLite database into a new FILE (mode 0600), while the relay serves',
    where: 'any',
    options: { to: { type: 'string', help: 'the new file' } },
  },
  restore: {
    usage: 'restore --from FILE',
    help: 'put a backup in place of the database (the relay stopped; the old one is kept beside it)',
    where: 'offline',
    options: { from: { type: 'string', help: 'the backup file' } },
  },
  'rotate-key': {
    usage: 'rotate-key [--overlap SECONDS] [--relay-key-file FILE]',
    help: 'make the next relay key and announce it; the relay takes it at its first start after the overlap',
    where: 'local',
    options: {
      overlap: {
        type: 'string',
        help: 'seconds the next key is announced before it is used, and the old one after (default 604800: 7 days)',
      },
      'relay-key-file': {
        type: 'string',
        help: 'the key file (WMP_RELAY_KEY_FILE; default <data-dir>/relay-identity.key)',
      },
    },
  },
  migrate: {
    usage: 'migrate --to postgres://...',
    help: 'copy the SQLite database into an empty PostgreSQL database (the relay stopped)',
    where: 'offline',
    options: {
      to: { type: 'string', help: 'the PostgreSQL URL (or WMP_MIGRATE_TO, to keep a password off the command line)' },
    },
  },
};

export interface AdminInvocation {
  readonly command: string;
  readonly where: Where;
  readonly args: Readonly<Record<string, unknown>>;
  readonly json: boolean;
  /** The data directory as given (relative to the working directory). */
  readonly dataDir: string;
  /** A cluster's database (undefined: the data directory's SQLite). Never printed. */
  readonly databaseUrl: string | undefined;
}

export type AdminParse =
  | { readonly kind: 'run'; readonly invocation: AdminInvocation }
  | { readonly kind: 'help'; readonly text: string };

const COMMON = {
  'data-dir': { type: 'string', help: 'the relay data directory (WMP_DATA_DIR; default ./data)' },
  'database-url': { type: 'string', help: "a cluster's PostgreSQL (WMP_DATABASE_URL): list and purge there" },
  json: { type: 'boolean', help: 'print the answer as JSON' },
  help: { type: 'boolean', help: 'this text' },
} as const;

export function adminHelp(command?: string): string {
  const spec = command === undefined ? undefined : COMMANDS[command];
  if (spec === undefined) {
    const width = Math.max(...Object.values(COMMANDS).map((c) => c.usage.length));
    return [
      'Usage: wmp-relay admin <command> [--data-dir DIR | --database-url URL] [--json]',
      '',
      'Inspects and maintains a relay. With a relay running on the data directory the command goes',
      'to it over its admin socket (<data-dir>/admin.sock, mode 0600); with none, it opens the files.',
      '',
      ...Object.values(COMMANDS).map((c) => `  ${c.usage.padEnd(width)}  ${c.help}`),
      '',
      ...Object.entries(COMMON).map(([name, o]) => `  --${name.padEnd(width - 2)}  ${o.help}`),
      '',
      'Exit codes: 0 done, 1 failed, 2 usage, 3 not found, 4 not now (a relay runs, or none does).',
      '',
    ].join('\n');
  }
  const options = { ...spec.options, ...COMMON };
  const width = Math.max(...Object.keys(options).map((n) => n.length + 2));
  return [
    `Usage: wmp-relay admin ${spec.usage}`,
    '',
    spec.help,
    '',
    ...Object.entries(options).map(([name, o]) => `  --${name.padEnd(width - 2)}  ${o.help}`),
    '',
  ].join('\n');
}

/** Parses the words after `admin`. */
export function parseAdmin(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): AdminParse {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    return { kind: 'help', text: adminHelp() };
  }
  const spec = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (spec === undefined)
    throw new AdminError('usage', `unknown admin command "${command}" (see wmp-relay admin --help)`);
  const options = Object.fromEntries(
    Object.entries({ ...spec.options, ...COMMON }).map(([name, o]) => [name, { type: o.type }]),
  ) as Record<string, { type: 'string' | 'boolean' }>;
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: [...rest], options, strict: true, allowPositionals: true });
  } catch (error) {
    const option = /'(-[^' ]+)/.exec((error as Error).message)?.[1];
    throw new AdminError('usage', `${command}: ${option ? `unknown or incomplete option ${option}` : 'bad options'}`);
  }
  const { values, positionals } = parsed;
  if (values.help === true) return { kind: 'help', text: adminHelp(command) };
  if (positionals.length > 0 && spec.positionals === undefined) {
    throw new AdminError('usage', `${command}: unexpected argument "${positionals[0]}"`);
  }
  const args: Record<string, unknown> = { ...(spec.positionals?.(positionals) ?? {}) };
  for (const name of Object.keys(spec.options)) if (values[name] !== undefined) args[name] = values[name];
  if (command === 'migrate' && args.to === undefined && env.WMP_MIGRATE_TO) args.to = env.WMP_MIGRATE_TO;
  if (command === 'rotate-key' && args['relay-key-file'] === undefined && env.WMP_RELAY_KEY_FILE) {
    args['relay-key-file'] = env.WMP_RELAY_KEY_FILE;
  }
  const fromEnv = (name: string) => (env[name] === undefined || env[name] === '' ? undefined : env[name]);
  const dataDir = (values['data-dir'] as string | undefined) ?? fromEnv('WMP_DATA_DIR') ?? './data';
  if (dataDir.trim() === '') throw new AdminError('usage', '--data-dir: must not be empty');
  const databaseUrl = (values['database-url'] as string | undefined) ?? fromEnv('WMP_DATABASE_URL');
  return {
    kind: 'run',
    invocation: { command, where: spec.where, args, json: values.json === true, dataDir, databaseUrl },
  };
}
