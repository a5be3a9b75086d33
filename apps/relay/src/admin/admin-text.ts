// The admin commands' answers as text for a terminal (`--json` prints the answers themselves).

type Row = Readonly<Record<string, unknown>>;

function age(seconds: unknown): string {
  if (typeof seconds !== 'number') return 'unknown';
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 172_800) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86_400)}d`;
}

function table(title: string, rows: readonly Row[], columns: readonly [string, (row: Row) => string][]): string[] {
  if (rows.length === 0) return [`${title}: none`];
  const cells = rows.map((row) => columns.map(([, cell]) => cell(row)));
  const widths = columns.map(([name], i) => Math.max(name.length, ...cells.map((c) => c[i]!.length)));
  const line = (values: readonly string[]) =>
    `  ${values.map((v, i) => (i === 0 ? v.padEnd(widths[i]!) : v.padStart(widths[i]!))).join('  ')}`.trimEnd();
  return [`${title} (${rows.length}):`, line(columns.map(([name]) => name)), ...cells.map(line)];
}

const QUEUE_COLUMNS: readonly [string, (row: Row) => string][] = [
  ['key', (r) => String(r.key)],
  ['messages', (r) => String(r.count)],
  ['bytes', (r) => String(r.bytes)],
  ['oldest', (r) => age(r.oldest_age_seconds)],
];

export const TEXT: Readonly<Record<string, (result: Row) => string[]>> = {
  status: (r) => Object.entries(r).map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`),
  queues: (r) => [
    ...table('queues', r.queues as Row[], QUEUE_COLUMNS),
    ...table('outboxes', r.outboxes as Row[], QUEUE_COLUMNS),
    ...table('boxes', r.boxes as Row[], [
      ['key', (row) => String(row.key)],
      ['events', (row) => String(row.count)],
      ['bytes', (row) => String(row.bytes)],
      ['oldest', (row) => age(row.oldest_age_seconds)],
    ]),
    ...(r.truncated ? ['(only the first 10000 of each list)'] : []),
  ],
  purge: (r) =>
    r.purged === 'expired'
      ? [`purged expired: ${r.messages} messages, ${r.events} events, ${r.cards} cards, ${r.sessions} sessions`]
      : [`purged ${r.purged} ${r.key}: ${r.removed} removed`],
  sessions: (r) =>
    r.closed !== undefined
      ? [`closed ${r.closed}`]
      : table('sessions', r.sessions as Row[], [
          ['id', (row) => String(row.id)],
          ['state', (row) => String(row.state)],
          ['initiator', (row) => String(row.initiator ?? '-')],
          ['expires', (row) => String(row.expires_at)],
        ]),
  backup: (r) => [`backup written to ${r.backup}`],
  restore: (r) => [`restored ${r.restored} into ${r.database}`, `the database it replaced: ${r.previous ?? 'none'}`],
  migrate: (r) => [`copied into PostgreSQL: ${JSON.stringify(r.rows)}`, ...(r.next as string[])],
  'rotate-key': (r) => (r.lines as string[]) ?? [],
};
