// Commits of our own, before the group adopts them: the proposals they carry and the pending
// commit they leave waiting for the delivery service. Pure over the ts-mls state.
import type { CipherSuiteId } from './cipher-suites.js';
import { asBridgeError, MlsBridgeError } from './errors.js';
import type { CommitResult, PendingCommit, PendingCommitState } from './group-types.js';
import { readKeyPackage } from './key-package.js';
import type { CommitKind } from './saved-state.js';
import {
  type CiphersuiteImpl,
  type ClientState,
  type CreateCommitOptions,
  createCommit,
  type Proposal,
} from './ts-mls.js';
import { encodeMessage, epochNumber } from './wire.js';

/** Add proposals for published key packages, checked first; none may name a member already in. */
export async function addProposals(
  keyPackages: readonly string[],
  members: readonly string[],
  cipherSuite: CipherSuiteId,
): Promise<Proposal[]> {
  if (keyPackages.length === 0) throw new MlsBridgeError('invalid_params');
  const seen = new Set(members);
  const proposals: Proposal[] = [];
  for (const text of keyPackages) {
    const { keyPackage, info } = await readKeyPackage(text, cipherSuite);
    if (seen.has(info.identity)) throw new MlsBridgeError('already_member');
    seen.add(info.identity);
    proposals.push({ proposalType: 'add', add: { keyPackage } });
  }
  return proposals;
}

/** A commit made from `state`, to be kept pending beside it until the caller confirms. */
export async function pendingCommitOf(
  state: ClientState,
  cs: CiphersuiteImpl,
  kind: CommitKind,
  options: CreateCommitOptions,
): Promise<PendingCommitState> {
  const epoch = state.groupContext.epoch;
  let r: Awaited<ReturnType<typeof createCommit>>;
  try {
    // The ratchet tree goes into any Welcome, so joiners need nothing out of band. The commit
    // stays a private message: the relay orders it by its clear epoch without reading it.
    r = await createCommit({ state, cipherSuite: cs }, { ...options, ratchetTreeExtension: true });
  } catch (e) {
    throw asBridgeError(e, 'commit_invalid');
  }
  const commit = encodeMessage(r.commit);
  const welcome = r.welcome && encodeMessage({ version: 'mls10', wireformat: 'mls_welcome', welcome: r.welcome });
  return { kind, state: r.newState, commit, welcome, epoch, consumed: r.consumed };
}

/** What the caller sees of a pending commit (the Welcome only when there is one). */
export function commitResultOf(p: PendingCommitState): CommitResult {
  return withWelcome(
    { commit: p.commit, epoch: epochNumber(p.epoch), nextEpoch: epochNumber(p.epoch + 1n) },
    p.welcome,
  );
}

export function pendingCommitViewOf(p: PendingCommitState): PendingCommit {
  return { kind: p.kind, ...commitResultOf(p) };
}

function withWelcome<T extends object>(result: T, welcome: string | undefined): T & { welcome?: string } {
  return welcome === undefined ? result : { ...result, welcome };
}
