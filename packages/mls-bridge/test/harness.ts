// Test harness: members built from real identities, and a stand-in for the relay's commit ordering
// (the first commit for an epoch wins, a competing one is refused). Real crypto throughout.
import { generateKeypair } from '@wmp/jcs-signing';
import { expect } from 'vitest';
import {
  type CommitResult,
  inspectMessage,
  MlsBridgeError,
  MlsClient,
  type MlsClientOptions,
  type MlsFailureReason,
  MlsGroup,
} from '../src/index.js';

export const te = new TextEncoder();
export const td = new TextDecoder();

export async function newClient(options: Partial<MlsClientOptions> = {}): Promise<MlsClient> {
  return MlsClient.create({ identity: generateKeypair(), ...options });
}

/** Orders commits per group and epoch like the relay: the first for an epoch wins. */
export class CommitOrderer {
  private readonly epochs = new Map<string, number>();

  /** True when accepted. */
  submit(commit: string): boolean {
    const info = inspectMessage(commit);
    expect(info.contentType).toBe('commit');
    const key = info.groupId!;
    const expected = this.epochs.get(key) ?? info.epoch!;
    if (info.epoch !== expected) return false;
    this.epochs.set(key, expected + 1);
    return true;
  }
}

/** Sends a commit through the orderer; on acceptance the committer confirms and the others process it. */
export async function deliverCommit(
  relay: CommitOrderer,
  committer: MlsGroup,
  result: CommitResult,
  others: readonly MlsGroup[],
): Promise<boolean> {
  if (!relay.submit(result.commit)) return false;
  await committer.confirmCommit();
  for (const g of others) {
    const r = await g.process(result.commit);
    expect(r.kind).toBe('commit');
  }
  return true;
}

/** A group of `n` members built by one add commit; returns groups in the creator-first order. */
export async function groupOf(
  n: number,
  relay = new CommitOrderer(),
): Promise<{ groups: MlsGroup[]; relay: CommitOrderer }> {
  const clients = await Promise.all(Array.from({ length: n }, () => newClient()));
  const creator = await MlsGroup.create(clients[0]!);
  const groups = [creator];
  if (n > 1) {
    const kps = await Promise.all(clients.slice(1).map((c) => c.createKeyPackage()));
    const add = await creator.add(kps.map((k) => k.keyPackage));
    expect(await deliverCommit(relay, creator, add, [])).toBe(true);
    for (const c of clients.slice(1)) groups.push(await MlsGroup.join(c, add.welcome!));
  }
  return { groups, relay };
}

/** `from` sends `text`; every group in `to` reads it, from `from`. */
export async function exchange(from: MlsGroup, to: readonly MlsGroup[], text: string): Promise<void> {
  const { ciphertext, epoch } = await from.encrypt(te.encode(text));
  expect(epoch).toBe(from.epoch);
  for (const g of to) {
    const got = await g.decrypt(ciphertext);
    expect(td.decode(got.plaintext)).toBe(text);
    expect(got.sender).toBe(from.identity);
  }
}

/** Awaits `p` and checks that it failed with a -31004 of this reason. */
export async function expectRefused(p: Promise<unknown>, reason: MlsFailureReason): Promise<MlsBridgeError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e, `expected ${reason}`).toBeInstanceOf(MlsBridgeError);
  const err = e as MlsBridgeError;
  expect({ reason: err.reason, code: err.code, data: err.data }).toEqual({ reason, code: -31004, data: { reason } });
  return err;
}
