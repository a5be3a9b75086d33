// `wmp-relay admin ...`: runs one admin command where it can run (inside the running relay over
// its admin socket, else on the data directory's files, or on a cluster's database) and prints
// its answer. Returns the exit code.
import { isAbsolute, join, resolve } from 'node:path';
import { announceRotation, RotationError } from '../key-rotation.js';
import { type AdminInvocation, parseAdmin } from './admin-args.js';
import { AdminError, adminErrorOf } from './admin-errors.js';
import { migrateDataDir, openDataDir, restoreDataDir } from './admin-files.js';
import { type AdminTarget, OPERATIONS } from './admin-operations.js';
import { adminSocketPath, askAdminServer } from './admin-socket.js';
import { TEXT } from './admin-text.js';

export interface AdminIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  readonly cwd: string;
  readonly version: string;
}

const absolute = (cwd: string, path: unknown) =>
  typeof path === 'string' && path !== '' && !isAbsolute(path) ? resolve(cwd, path) : path;

async function onTarget(target: AdminTarget, invocation: AdminInvocation): Promise<unknown> {
  const operation = OPERATIONS[invocation.command];
  if (operation === undefined) throw new AdminError('usage', `${invocation.command} runs on a data directory only`);
  return operation(target, invocation.args);
}

async function onCluster(invocation: AdminInvocation, url: string, version: string): Promise<unknown> {
  if (invocation.where === 'offline' || invocation.command === 'backup') {
    throw new AdminError(
      'usage',
      invocation.command === 'backup'
        ? 'a cluster is backed up with pg_dump (see docs/operations.md)'
        : `${invocation.command} works on a data directory (--data-dir)`,
    );
  }
  const [{ PostgresStore, postgresBoxStore }] = await Promise.all([import('@wmp/relay-server/postgres')]);
  const stores = await PostgresStore.open({
    url,
    applicationName: 'wmp-relay-admin',
    poolSize: 2,
    boxStore: postgresBoxStore,
  });
  try {
    return await onTarget({ stores, info: { store: 'postgres', admin_version: version } }, invocation);
  } finally {
    await stores.close();
  }
}

/** 7 days: long enough for clients and peers that read the well-known document now and then. */
const DEFAULT_OVERLAP_SECONDS = 604_800;

async function rotateKey(invocation: AdminInvocation, io: AdminIo): Promise<unknown> {
  const overlapText = invocation.args.overlap ?? String(DEFAULT_OVERLAP_SECONDS);
  if (typeof overlapText !== 'string' || !/^\d+$/.test(overlapText)) {
    throw new AdminError('usage', '--overlap: seconds (an integer >= 0)');
  }
  const given = invocation.args['relay-key-file'];
  const keyFile = resolve(io.cwd, typeof given === 'string' ? given : join(invocation.dataDir, 'relay-identity.key'));
  let record: Awaited<ReturnType<typeof announceRotation>>;
  try {
    record = await announceRotation(keyFile, Number(overlapText) * 1000);
  } catch (error) {
    if (error instanceof RotationError) throw new AdminError('conflict', error.message);
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new AdminError('not_found', `no relay key at ${keyFile}`);
    throw error;
  }
  const { statement } = record;
  return {
    key_file: keyFile,
    relay_id: statement.relay_id,
    next_relay_id: statement.next_relay_id,
    switch_at: statement.switch_at,
    lines: [
      `next relay key: ${statement.next_relay_id} (${keyFile}.next)`,
      `announced now in /.well-known/wmp-configuration as relay_id_rotation, signed by ${statement.relay_id}`,
      `restart the relay after ${statement.switch_at}: it then takes the next key`,
    ],
  };
}

async function onDataDir(invocation: AdminInvocation, io: AdminIo): Promise<unknown> {
  const dataDir = resolve(io.cwd, invocation.dataDir);
  const args = {
    ...invocation.args,
    to: absolute(io.cwd, invocation.args.to),
    from: absolute(io.cwd, invocation.args.from),
  };
  if (invocation.command === 'migrate') args.to = invocation.args.to;
  const socket = adminSocketPath(dataDir);
  if (invocation.where === 'offline') {
    if ((await askAdminServer(socket, { command: 'status', args: {} })) !== undefined) {
      throw new AdminError('conflict', `a relay runs on ${dataDir}: stop it first`);
    }
    if (invocation.command === 'restore') {
      if (typeof args.from !== 'string') throw new AdminError('usage', 'restore needs --from FILE');
      return restoreDataDir(dataDir, args.from);
    }
    if (typeof args.to !== 'string' || !/^postgres(ql)?:\/\//.test(args.to)) {
      throw new AdminError('usage', 'migrate needs --to postgres://...');
    }
    return migrateDataDir(dataDir, args.to);
  }
  const asked = await askAdminServer(socket, { command: invocation.command, args });
  if (asked !== undefined) return asked.answer;
  if (invocation.command === 'status') return { running: false, data_dir: dataDir, admin_version: io.version };
  const { stores, backup } = await openDataDir(dataDir);
  try {
    return await onTarget({ stores, backup, info: { data_dir: dataDir } }, { ...invocation, args });
  } finally {
    await stores.close();
  }
}

export async function runAdmin(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  io: AdminIo,
): Promise<number> {
  try {
    const parsed = parseAdmin(argv, env);
    if (parsed.kind === 'help') {
      io.out(parsed.text);
      return 0;
    }
    const { invocation } = parsed;
    const result = (
      invocation.where === 'local'
        ? await rotateKey(invocation, io)
        : invocation.databaseUrl === undefined
          ? await onDataDir(invocation, io)
          : await onCluster(invocation, invocation.databaseUrl, io.version)
    ) as Record<string, unknown>;
    io.out(
      invocation.json ? `${JSON.stringify(result, null, 2)}\n` : `${TEXT[invocation.command]!(result).join('\n')}\n`,
    );
    return 0;
  } catch (error) {
    const e = adminErrorOf(error);
    io.err(`wmp-relay admin: ${e.message}\n`);
    return e.exitCode;
  }
}
