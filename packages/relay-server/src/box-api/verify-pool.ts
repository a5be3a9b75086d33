import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { verifyEd25519 } from '@wmp/jcs-signing';
import type { EventSignatureCheck } from '@wmp/ohan-seal';

/**
 * The worker: plain CommonJS on node:crypto only, so it loads the same from sources, a build or a
 * test runner. Strict RFC 8032 verification, as `verifyEd25519` on Node; keys arrive already
 * checked not to be of small order. Imported keys are cached (importing halves verify speed).
 */
const WORKER_SOURCE = `'use strict';
const { parentPort } = require('node:worker_threads');
const { createPublicKey, verify } = require('node:crypto');
const MAX_KEYS = 4096;
const keys = new Map();
function keyOf(raw) {
  const x = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('base64url');
  let key = keys.get(x);
  if (key === undefined) {
    key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
    if (keys.size >= MAX_KEYS) keys.delete(keys.keys().next().value);
    keys.set(x, key);
  }
  return key;
}
parentPort.on('message', ({ id, buffer, offsets }) => {
  const bytes = new Uint8Array(buffer);
  const results = new Uint8Array(offsets.length - 1);
  for (let i = 0; i < results.length; i++) {
    const at = offsets[i];
    try {
      const ok = verify(null, bytes.subarray(at + 96, offsets[i + 1]), keyOf(bytes.subarray(at, at + 32)), bytes.subarray(at + 32, at + 96));
      results[i] = ok ? 1 : 0;
    } catch {
      results[i] = 0;
    }
  }
  parentPort.postMessage({ id, results }, [results.buffer]);
});
`;

/** Checks queued or in a worker before new ones are verified on the caller's thread (memory stays bounded). */
const MAX_PENDING = 4096;
/** Workers that may fail before the pool gives up and verifies on the caller's thread for good. */
const MAX_FAILURES = 3;
/**
 * Most checks in one message to a worker, and batches in flight per worker. Measured with 100
 * publishes in flight on 2 cores: one unbounded batch at a time fell into lockstep (the event loop
 * idle 40% of the time while the worker checked everything in flight, the worker idle while the
 * loop committed it); 16 x 4 keeps both busy: 1.3-1.6x the throughput of verifying on the loop.
 */
const MAX_BATCH = 16;
const BATCHES_PER_WORKER = 4;

interface Job {
  readonly check: EventSignatureCheck;
  readonly resolve: (valid: boolean) => void;
}

interface Slot {
  readonly worker: Worker;
  /** In flight, by id. */
  readonly batches: Map<number, readonly Job[]>;
}

/** Default worker count: one per spare core, at most 4; none on a single core. */
export function defaultVerifyThreads(): number {
  return Math.max(0, Math.min(4, availableParallelism() - 1));
}

function verifyHere(check: EventSignatureCheck): boolean {
  return verifyEd25519(check.publicKey, check.message, check.signature);
}

/**
 * Ed25519 checks of published events on worker threads, so they run on the other cores while the
 * event loop parses, answers and commits (measured on 2 cores: see docs/decisions.md). Checks go
 * to a worker in batches (one transferred buffer per batch) and their verdicts come back as one
 * message. A worker that fails has its checks done on the caller's thread and is replaced; checks
 * past `MAX_PENDING`, or after `close`, are done on the caller's thread too. Workers are started on
 * first use and hold the process open only while they have work.
 */
export class SignatureVerifyPool {
  readonly #threads: number;
  readonly #source: string;
  readonly #slots: Slot[] = [];
  #queued: Job[] = [];
  #pending = 0;
  #scheduled = false;
  #nextBatch = 0;
  #failures = 0;
  #closed = false;

  /** `workerSource` replaces the worker's code (tests give one that fails). */
  constructor(threads: number, workerSource = WORKER_SOURCE) {
    if (!Number.isSafeInteger(threads) || threads < 1) throw new RangeError('threads must be an integer >= 1');
    this.#threads = threads;
    this.#source = workerSource;
  }

  /** Resolves with whether the signature verifies (never rejects). */
  verify(check: EventSignatureCheck): Promise<boolean> {
    if (this.#closed || this.#failures >= MAX_FAILURES || this.#pending >= MAX_PENDING) {
      return Promise.resolve(verifyHere(check));
    }
    this.#pending++;
    return new Promise((resolve) => {
      this.#queued.push({ check, resolve });
      this.#schedule();
    });
  }

  /** Workers running now (for tests and metrics). */
  get threads(): number {
    return this.#slots.length;
  }

  /** Stops the workers; checks in flight are finished on the caller's thread. */
  async close(): Promise<void> {
    this.#closed = true;
    const slots = this.#slots.splice(0);
    for (const slot of slots) this.#settleHere(slot);
    this.#flushHere();
    await Promise.all(slots.map((slot) => slot.worker.terminate()));
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    // setImmediate: every request of this turn's I/O joins the batch.
    setImmediate(() => {
      this.#scheduled = false;
      this.#dispatch();
    });
  }

  /**
   * Sends what is queued to the workers in batches of at most `MAX_BATCH`, keeping at most
   * `BATCHES_PER_WORKER` in flight per worker; the rest waits for an answer. Batches amortize the
   * messages; several small ones in flight keep the work in step: the event loop handles one
   * batch's answers (commit, respond, parse the next requests) while a worker checks the next.
   */
  #dispatch(): void {
    if (this.#queued.length === 0) return;
    if (this.#closed || this.#failures >= MAX_FAILURES) {
      this.#flushHere();
      return;
    }
    while (this.#slots.length < this.#threads) this.#start();
    for (;;) {
      const slot = this.#slots.reduce((a, b) => (b.batches.size < a.batches.size ? b : a));
      if (this.#queued.length === 0 || slot.batches.size >= BATCHES_PER_WORKER) return;
      this.#send(slot, this.#queued.splice(0, MAX_BATCH));
    }
  }

  #send(slot: Slot, jobs: readonly Job[]): void {
    let total = 0;
    for (const job of jobs) total += 96 + job.check.message.byteLength;
    const bytes = new Uint8Array(total);
    const offsets: number[] = [];
    let at = 0;
    for (const { check } of jobs) {
      offsets.push(at);
      bytes.set(check.publicKey, at);
      bytes.set(check.signature, at + 32);
      bytes.set(check.message, at + 96);
      at += 96 + check.message.byteLength;
    }
    offsets.push(at);
    const id = this.#nextBatch++;
    slot.batches.set(id, jobs);
    // Referenced only while it has work: an idle pool never keeps the process alive.
    slot.worker.ref();
    slot.worker.postMessage({ id, buffer: bytes.buffer, offsets }, [bytes.buffer]);
  }

  #start(): void {
    const worker = new Worker(this.#source, { eval: true });
    worker.unref();
    const slot: Slot = { worker, batches: new Map() };
    worker.on('message', ({ id, results }: { id: number; results: Uint8Array }) => {
      const jobs = slot.batches.get(id);
      if (jobs === undefined) return;
      slot.batches.delete(id);
      if (slot.batches.size === 0) worker.unref();
      this.#settle(
        jobs,
        jobs.map((_, i) => results[i] === 1),
      );
      this.#dispatch();
    });
    const fail = () => {
      const index = this.#slots.indexOf(slot);
      if (index < 0) return;
      this.#slots.splice(index, 1);
      this.#failures++;
      this.#settleHere(slot);
      this.#schedule();
    };
    worker.on('error', fail);
    worker.on('exit', fail);
    this.#slots.push(slot);
  }

  /** A worker's unanswered checks, done here. */
  #settleHere(slot: Slot): void {
    for (const jobs of slot.batches.values()) {
      this.#settle(
        jobs,
        jobs.map((j) => verifyHere(j.check)),
      );
    }
    slot.batches.clear();
  }

  #flushHere(): void {
    const jobs = this.#queued;
    this.#queued = [];
    this.#settle(
      jobs,
      jobs.map((j) => verifyHere(j.check)),
    );
  }

  #settle(jobs: readonly Job[], valid: readonly boolean[]): void {
    this.#pending -= jobs.length;
    for (let i = 0; i < jobs.length; i++) jobs[i]!.resolve(valid[i]!);
  }
}
