// The operations of a write batch and how one unit of them runs in a transaction (savepoints,
// set-based groups), apart from the writer that queues and retries batches.
import { writeFailure } from './postgres-failures.js';
import { isConnectionError, isRetryable } from './postgres-sqlstate.js';
import type { Locks } from './write-locks.js';
import type { Failure, WriteTx } from './write-tx.js';

/** One operation of a batch. */
export interface WriteOp<T> {
  readonly locks?: Locks;
  /**
   * Runs without a savepoint: it decides before it writes (a refusal throws before any
   * statement), and its statements fail only when the database does. If one does fail, the
   * batch is run again with this operation in a savepoint of its own, so it still fails alone.
   */
  readonly atomic?: boolean;
  /**
   * Runs in a transaction of its own (sweeps): it may lock what it finds (`tx.lock`), being the
   * first to lock anything in its transaction.
   */
  readonly alone?: boolean;
  run(tx: WriteTx): Promise<T>;
}

export type Settled<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown };

/**
 * Operations of one kind written together with set-based statements (`INSERT ... SELECT FROM
 * unnest(...)`): every item of a batch of this kind goes to one `run`, at the place of the first.
 * `prepare` sends what can go with the batch's locks (reads, or writes whose result `run` needs),
 * in the same round trip; `run` decides and sends its writes without waiting for them. A group is
 * atomic in the sense of `WriteOp.atomic`: a refused item is settled with its error and writes
 * nothing; when one of its statements fails, the batch runs again with each item on its own, in
 * its own savepoint.
 */
export interface WriteGroup<I, T, P = unknown> {
  readonly name: string;
  prepare?(tx: WriteTx, items: readonly I[]): P;
  run(tx: WriteTx, items: readonly I[], prepared: P | undefined): Promise<Settled<T>[]>;
}

export interface Pending {
  readonly op: WriteOp<unknown> | undefined;
  readonly group: WriteGroup<unknown, unknown> | undefined;
  readonly item: unknown;
  readonly locks: Locks | undefined;
  readonly alone: boolean;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

export interface Unit {
  readonly id: number;
  readonly op: WriteOp<unknown> | undefined;
  readonly group: WriteGroup<unknown, unknown> | undefined;
  /** Indexes into the batch. */
  readonly members: number[];
}

/** Why an attempt must be run again. */
export type Retry =
  | { readonly retry: 'isolate'; readonly unit: number }
  | { readonly retry: 'strict' }
  | { readonly retry: 'again'; readonly cause: unknown };

/** Runs one unit; settles its members in `outcomes`, or says why the attempt must start over. */
export async function runUnit(
  tx: WriteTx,
  batch: readonly Pending[],
  unit: Unit,
  isolated: boolean,
  prepared: ReadonlyMap<number, unknown>,
  outcomes: Settled<unknown>[],
): Promise<Retry | undefined> {
  const savepoint = isolated || (unit.op !== undefined && unit.op.atomic !== true);
  if (savepoint) {
    // Earlier units' statements answer first, so a failure is theirs, not this one's.
    await tx.settled();
    if (tx.failure !== undefined) return failedRetry(tx.failure);
  }
  tx.within(unit.id);
  try {
    if (unit.group !== undefined && isolated) {
      // Each item alone, in a savepoint: the one whose statement fails fails by itself.
      for (const index of unit.members) {
        const one: Unit = { ...unit, members: [index] };
        const settled = await inSavepoint(tx, () => runGroup(tx, batch, one, undefined));
        outcomes[index] = settled.ok ? settled.value[0]! : settled;
      }
      return undefined;
    }
    const run =
      unit.group !== undefined
        ? () => runGroup(tx, batch, unit, prepared.get(unit.id))
        : async () => [{ ok: true, value: await unit.op!.run(tx) } as Settled<unknown>];
    if (savepoint) {
      const settled = await inSavepoint(tx, run);
      unit.members.forEach((index, i) => {
        outcomes[index] = settled.ok ? settled.value[i]! : settled;
      });
      return undefined;
    }
    const mark = tx.mark;
    try {
      const values = await run();
      unit.members.forEach((index, i) => {
        outcomes[index] = values[i]!;
      });
      return undefined;
    } catch (error) {
      tx.rollbackTo(mark);
      if (tx.failure === undefined) {
        // Refused before writing anything: nothing to roll back in the database.
        for (const index of unit.members) outcomes[index] = { ok: false, error };
        return undefined;
      }
      return failedRetry(tx.failure);
    }
  } finally {
    tx.within(undefined);
  }
}

function failedRetry(failure: Failure): Retry {
  if (isConnectionError(failure.error)) throw failure.error;
  if (isRetryable(failure.error)) return { retry: 'again', cause: failure.error };
  if (failure.unit === undefined) throw failure.error;
  return { retry: 'isolate', unit: failure.unit };
}

function runGroup(tx: WriteTx, batch: readonly Pending[], unit: Unit, prepared: unknown): Promise<Settled<unknown>[]> {
  const group = unit.group!;
  const items = itemsOf(batch, unit);
  return group.run(tx, items, prepared ?? group.prepare?.(tx, items));
}

/** Runs `fn` in a savepoint: rolled back alone (database and journal) when it throws or a statement fails. */
async function inSavepoint<T>(tx: WriteTx, fn: () => Promise<T>): Promise<Settled<T>> {
  const mark = tx.mark;
  tx.send('SAVEPOINT op');
  let outcome: Settled<T>;
  try {
    outcome = { ok: true, value: await fn() };
  } catch (error) {
    outcome = { ok: false, error };
  }
  await tx.settled();
  const failure = tx.failure;
  if (outcome.ok && failure === undefined) {
    tx.send('RELEASE SAVEPOINT op');
    return outcome;
  }
  tx.rollbackTo(mark);
  if (failure !== undefined && (isConnectionError(failure.error) || isRetryable(failure.error))) throw failure.error;
  await tx.query('ROLLBACK TO SAVEPOINT op');
  tx.send('RELEASE SAVEPOINT op');
  tx.clearFailure();
  // A statement of this operation failed: that is a write error of its own (the driver's error is the cause).
  return failure !== undefined ? { ok: false, error: writeFailure(failure.error) } : outcome;
}

export function itemsOf(batch: readonly Pending[], unit: Unit): unknown[] {
  return unit.members.map((index) => batch[index]!.item);
}

/** The batch as units: each group once (at its first item), every other operation by itself. */
export function unitsOf(batch: readonly Pending[]): Unit[] {
  const units: Unit[] = [];
  const groups = new Map<WriteGroup<unknown, unknown>, Unit>();
  batch.forEach((p, index) => {
    if (p.group === undefined) {
      units.push({ id: units.length, op: p.op, group: undefined, members: [index] });
      return;
    }
    const unit = groups.get(p.group);
    if (unit !== undefined) unit.members.push(index);
    else {
      const created: Unit = { id: units.length, op: undefined, group: p.group, members: [index] };
      groups.set(p.group, created);
      units.push(created);
    }
  });
  return units;
}
