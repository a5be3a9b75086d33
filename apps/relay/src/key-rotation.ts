// Relay key rotation with an overlap (docs/decisions/0532): `wmp-relay admin rotate-key` writes
// the next key beside the current one with a rotation record; the relay announces the next id in
// its well-known document (signed by the current key) until the switch time, takes the next key
// at its first start after it, and then announces the previous id (with the same signature) for
// as long again. Files beside the key file: `<key>.next`, `<key>.previous`, `<key>.rotation.json`.
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, statSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { jcsBytes, keypairFromSeed, signDetached } from '@wmp/jcs-signing';

/** What the old key signs: the two ids and the switch time (RFC 3339). */
export interface RotationStatement {
  readonly type: 'wmp-relay-key-rotation';
  readonly relay_id: string;
  readonly next_relay_id: string;
  readonly switch_at: string;
}

export interface RotationRecord {
  readonly state: 'announced' | 'switched';
  readonly statement: RotationStatement;
  /** The next key's Multikey (what `relay_key` will be). */
  readonly next_relay_key: string;
  /** A detached JWS by the old key over JCS(statement). */
  readonly signature: string;
  /** How long each phase lasts (ms): announced until `switch_at`, the previous id published as long after the switch. */
  readonly overlap_ms: number;
  /** When the relay took the next key (ms), once switched. */
  readonly switched_at?: number;
}

export function rotationPaths(keyFile: string) {
  return { next: `${keyFile}.next`, previous: `${keyFile}.previous`, record: `${keyFile}.rotation.json` };
}

const hex = (seed: Uint8Array) => `${Buffer.from(seed).toString('hex')}\n`;

function writeFileDurably(path: string, text: string, mode: number): void {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const fd = openSync(tmp, 'wx', mode);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  const dir = openSync(dirname(path), 'r');
  try {
    fsyncSync(dir);
  } catch {
    // Not every platform can fsync a directory.
  } finally {
    closeSync(dir);
  }
}

function readSeed(path: string): Uint8Array {
  const text = readFileSync(path, 'utf8').trim();
  if (!/^[0-9a-f]{64}$/i.test(text)) throw new Error(`${path}: not a relay key`);
  return Uint8Array.from(Buffer.from(text, 'hex'));
}

export function readRotation(keyFile: string): RotationRecord | undefined {
  try {
    return JSON.parse(readFileSync(rotationPaths(keyFile).record, 'utf8')) as RotationRecord;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

export class RotationError extends Error {
  override readonly name = 'RotationError';
}

/**
 * Makes the next key and announces it: `switchAt = now + overlapMs`. Refused while a rotation is
 * announced and not yet taken, or while the previous key is still published.
 */
export async function announceRotation(keyFile: string, overlapMs: number, now = Date.now()): Promise<RotationRecord> {
  const paths = rotationPaths(keyFile);
  const current = readRotation(keyFile);
  if (current?.state === 'announced')
    throw new RotationError('a rotation is announced already (restart the relay after its switch time)');
  if (current?.state === 'switched' && now < (current.switched_at ?? 0) + current.overlap_ms) {
    throw new RotationError('the previous key is still published: rotate again after its overlap');
  }
  if ((statSync(keyFile).mode & 0o077) !== 0)
    throw new RotationError(`${keyFile} must not be readable by group or others`);
  const old = keypairFromSeed(readSeed(keyFile));
  const nextSeed = Uint8Array.from(randomBytes(32));
  const next = keypairFromSeed(nextSeed);
  const statement: RotationStatement = {
    type: 'wmp-relay-key-rotation',
    relay_id: old.did,
    next_relay_id: next.did,
    switch_at: new Date(now + overlapMs).toISOString(),
  };
  const record: RotationRecord = {
    state: 'announced',
    statement,
    next_relay_key: next.multikey,
    signature: await signDetached(jcsBytes(statement), old),
    overlap_ms: overlapMs,
  };
  writeFileDurably(paths.next, hex(nextSeed), 0o600);
  writeFileDurably(paths.record, `${JSON.stringify(record, null, 2)}\n`, 0o600);
  return record;
}

/**
 * At start, before the key is read: when an announced rotation's switch time has passed, the
 * next key becomes the key (the current one kept as `<key>.previous`). Crash-safe: the previous
 * copy is written first, the key replaced by one rename, the record last (a start that finds the
 * key already switched only finishes the record). Returns the record in force.
 */
export function applyRotation(keyFile: string, now = Date.now()): RotationRecord | undefined {
  const record = readRotation(keyFile);
  if (record?.state !== 'announced' || now < Date.parse(record.statement.switch_at)) return record;
  const paths = rotationPaths(keyFile);
  const keyId = keypairFromSeed(readSeed(keyFile)).did;
  if (keyId === record.statement.relay_id) {
    if (!existsSync(paths.next)) throw new RotationError(`${paths.next}: the announced next key is missing`);
    if (keypairFromSeed(readSeed(paths.next)).did !== record.statement.next_relay_id) {
      throw new RotationError(`${paths.next}: not the announced next key`);
    }
    writeFileDurably(paths.previous, readFileSync(keyFile, 'utf8'), 0o600);
    renameSync(paths.next, keyFile);
  } else if (keyId !== record.statement.next_relay_id) {
    throw new RotationError(`${keyFile}: neither the key nor the next key of the announced rotation`);
  }
  const switched: RotationRecord = { ...record, state: 'switched', switched_at: now };
  writeFileDurably(paths.record, `${JSON.stringify(switched, null, 2)}\n`, 0o600);
  return switched;
}

/** `relay_id_rotation` of the well-known document now, or undefined when nothing is announced. */
export function rotationAnnouncement(
  record: RotationRecord | undefined,
  now = Date.now(),
): Record<string, unknown> | undefined {
  if (record === undefined) return undefined;
  const { statement, signature } = record;
  if (record.state === 'announced') {
    return {
      relay_id: statement.relay_id,
      next_relay_id: statement.next_relay_id,
      next_relay_key: record.next_relay_key,
      switch_at: statement.switch_at,
      signature,
    };
  }
  const switchedAt = record.switched_at ?? 0;
  if (now >= switchedAt + record.overlap_ms) return undefined;
  return {
    previous_relay_id: statement.relay_id,
    relay_id: statement.next_relay_id,
    switch_at: statement.switch_at,
    switched_at: new Date(switchedAt).toISOString(),
    signature,
  };
}

/**
 * The announcement as the relay serves it: the record re-read at most every `ttlMs` (an admin on
 * the same host, or an operator copying the files to a cluster's nodes, changes it under a
 * running relay). A record that cannot be read is no announcement.
 */
export function rotationReader(
  keyFile: string,
  ttlMs = 5_000,
  now = Date.now,
): () => Record<string, unknown> | undefined {
  let readAt = Number.NEGATIVE_INFINITY;
  let record: RotationRecord | undefined;
  return () => {
    const t = now();
    if (t - readAt >= ttlMs) {
      readAt = t;
      try {
        record = readRotation(keyFile);
      } catch {
        record = undefined;
      }
    }
    return rotationAnnouncement(record, t);
  };
}
