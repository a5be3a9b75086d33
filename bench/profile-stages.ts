// The stages of the relay's per-message work, and how a sampled call frame is assigned to one:
// used by bench/profile-summary.ts. A sample's stage is that of the frame nearest to the leaf that
// a rule matches (node:crypto, sockets and other built-ins match nothing, so their time goes to
// our caller: an Ed25519 `signOneShot` under `signDetached` is the relay_chain signature). A
// `generic` rule (a frame that serves several stages: the session layer's send, JSON.stringify
// inside it, the crypto wrappers) hands the sample on to the next matching frame above it, so a
// frame written for a status counts as the status, the same code for a forward as the forward.

export interface Frame {
  readonly functionName: string;
  /** The script's URL or path; '' for V8's own entries ((garbage collector), (program), ...). */
  readonly url: string;
}

export interface StageRule {
  readonly stage: string;
  /** Matches the frame's file (URL); absent: any file. */
  readonly file?: RegExp;
  /** Matches the frame's function name; absent: any name. */
  readonly fn?: RegExp;
  /** Only when some frame above it has this function name. */
  readonly under?: RegExp;
  /** Serves several stages: the next matching frame above decides (see the header). */
  readonly generic?: boolean;
}

/** Stages in the order of the table; the last three are not per-message work and are excluded. */
export const STAGES = [
  'ws receive (frames, UTF-8 check)',
  'parse (strict JSON)',
  'envelope validation (schemas)',
  'enforcement (session, sender binding, limits)',
  'session dispatch (peer, handlers)',
  'route (deliver handler, stored text, fan-out)',
  'JCS + content hash',
  'relay_chain entry (hop, chain)',
  'relay_chain signature (Ed25519)',
  'store append (record, caps)',
  'SQLite statements (INSERT, UPDATE, DELETE, totals)',
  'SQLite BEGIN/COMMIT (fsync) + write queue',
  'SQLite checkpoints (worker thread)',
  'PostgreSQL client (pg: queries, protocol, rows)',
  'PostgreSQL store (queue, sessions, writer)',
  'Redis client + coordination (wake-ups, buckets, presence)',
  'forward (stringify + ws send)',
  'socket writes (all frames, flushed per tick)',
  'ack handling',
  'status build/send',
  'GC',
  'event loop + promises (runtime)',
  'other',
] as const;

export const EXCLUDED = ['startup (module loading)', 'connection setup (upgrade, auth, register)', 'idle'] as const;

const ENVELOPE = /jsonrpc-envelope\/src\//;
const JCS_SIGNING = /jcs-signing\/src\//;
const SQLITE = /relay-server\/src\/storage\/sqlite\//;

/** Checked in this order for each frame; the first rule that matches gives the frame's stage. */
export const RULES: readonly StageRule[] = [
  { stage: 'idle', fn: /^\(idle\)$/, file: /^$/ },
  { stage: 'GC', fn: /^\(garbage collector\)$/, file: /^$/ },
  { stage: 'other', fn: /^\(program\)$/, file: /^$/ },
  { stage: 'startup (module loading)', file: /node:internal\/modules\/|\/tsx\/|\/esbuild\/|node:internal\/bootstrap/ },
  { stage: 'startup (module loading)', fn: /^(createRelay|createRelayCore|openStores)$/ },
  {
    stage: 'connection setup (upgrade, auth, register)',
    file: /session\/src\/auth\/|session\/src\/handlers\/session\.ts|relay\/sessions\/registration\.ts|transports\/src\/ws-attach\.ts/,
  },
  { stage: 'connection setup (upgrade, auth, register)', fn: /^(handleUpgrade|completeUpgrade|emitClose)$/ },
  // The writer's flush: every statement of a batch, then COMMIT.
  { stage: 'SQLite BEGIN/COMMIT (fsync) + write queue', file: /storage\/sqlite\/write-queue\.ts/ },
  { stage: 'SQLite statements (INSERT, UPDATE, DELETE, totals)', file: SQLITE, under: /^#flush$/ },
  // The checkpointer's worker runs PRAGMA wal_checkpoint; the main thread only at startup.
  { stage: 'SQLite checkpoints (worker thread)', file: /better-sqlite3\/lib\/methods\/pragma\.js/ },
  // A cluster node: the database and coordination clients, before the socket rules (their reads
  // and writes are on sockets too, and count as theirs).
  {
    stage: 'PostgreSQL client (pg: queries, protocol, rows)',
    file: /\/node_modules\/(pg|pg-protocol|pg-pool|pg-types)\//,
  },
  {
    stage: 'Redis client + coordination (wake-ups, buckets, presence)',
    file: /@redis\/client\/|relay-server\/src\/coordination\/redis\//,
  },
  { stage: 'PostgreSQL store (queue, sessions, writer)', file: /relay-server\/src\/storage\/postgres\// },
  { stage: 'ws receive (frames, UTF-8 check)', file: /ws\/lib\/(receiver|validation|buffer-util)\.js/ },
  { stage: 'ws receive (frames, UTF-8 check)', fn: /^(receiverOnMessage|socketOnData|onStreamRead)$/ },
  {
    stage: 'ws receive (frames, UTF-8 check)',
    file: /transports\/src\/ws-server\.ts/,
    fn: /^(#receive|#emit|rawText)$/,
  },
  { stage: 'socket writes (all frames, flushed per tick)', fn: /^#uncork$/ },
  // The UTF-8 byte count: the route counts the stored text, the queue a record without a count.
  { stage: 'other', file: ENVELOPE, fn: /^utf8Length$/, generic: true },
  { stage: 'envelope validation (schemas)', file: /\/valibot\// },
  {
    stage: 'envelope validation (schemas)',
    file: /jsonrpc-envelope\/src\/(method-registry|validate|schemas\/|bounded)/,
  },
  { stage: 'parse (strict JSON)', file: ENVELOPE },
  { stage: 'JCS + content hash', file: /jcs-signing\/src\/jcs\.ts/ },
  { stage: 'JCS + content hash', file: JCS_SIGNING, fn: /^(contentHash|sha256)$/ },
  { stage: 'relay_chain signature (Ed25519)', file: /jcs-signing\/src\/jws\.ts/ },
  { stage: 'relay_chain entry (hop, chain)', file: /jcs-signing\/src\/relay-chain\.ts/ },
  // Key handling, byte helpers, the node:crypto wrappers: whoever called them.
  { stage: 'other', file: JCS_SIGNING, generic: true },
  {
    stage: 'enforcement (session, sender binding, limits)',
    file: /relay\/(support\/(relay-limiters|refusals|noted-session-store)|sessions\/auth-context)\.ts|coordination\/memory\/token-buckets|storage\/contracts\/limits\.ts|session\/src\/(server|enforce|session-model|session-routing|memory-session-store)\.ts|sqlite-session-store\.ts|storage\/contracts\/session-json\.ts/,
  },
  { stage: 'ack handling', file: /relay\/sessions\/hooks\.ts/, fn: /^ack/ },
  { stage: 'ack handling', file: SQLITE, fn: /^ack/ },
  { stage: 'status build/send', file: /relay\/statuses\/statuses\.ts/ },
  {
    stage: 'forward (stringify + ws send)',
    file: /relay\/(routing\/(forwarder|queue-wake-ups)|presence\/presence)\.ts|coordination\/memory\/wake-ups/,
  },
  { stage: 'store append (record, caps)', file: /relay-server\/src\/storage\// },
  {
    stage: 'route (deliver handler, stored text, fan-out)',
    file: /relay\/(routing\/(route|recipients)|sessions\/deliver)\.ts/,
  },
  // Sending: the session layer's notify/reply (JSON.stringify inside), the transport, ws's sender.
  {
    stage: 'forward (stringify + ws send)',
    file: /session\/src\/peer\.ts/,
    fn: /^(notify|request|#reply|#send|#write)/,
    generic: true,
  },
  {
    stage: 'forward (stringify + ws send)',
    file: /relay\/support\/observed-transport\.ts|transports\/src\/ws-server\.ts/,
    generic: true,
  },
  { stage: 'forward (stringify + ws send)', file: /ws\/lib\/(sender|websocket)\.js/, generic: true },
  { stage: 'session dispatch (peer, handlers)', file: /session\/src\/(peer|handlers\/)/ },
  { stage: 'session dispatch (peer, handlers)', file: /relay-server\/src\/relay\/core\.ts/ },
  {
    stage: 'event loop + promises (runtime)',
    fn: /^(runMicrotasks|processTicksAndRejections|runNextTicks|processImmediate|listOnTimeout|processTimers)$/,
  },
];

function matches(rule: StageRule, frame: Frame, above: readonly Frame[]): boolean {
  if (rule.file && !rule.file.test(frame.url)) return false;
  if (rule.fn && !rule.fn.test(frame.functionName)) return false;
  const under = rule.under;
  return under === undefined || above.some((f) => under.test(f.functionName));
}

/**
 * The stage of a sample, given its stack from the leaf to the root. A generic match is kept only
 * when no frame above it matches a rule; unmatched stacks are 'other'.
 */
export function stageOf(stack: readonly Frame[]): string {
  let generic: string | undefined;
  for (let i = 0; i < stack.length; i++) {
    const frame = stack[i]!;
    const above = stack.slice(i + 1);
    const rule = RULES.find((r) => matches(r, frame, above));
    if (rule === undefined) continue;
    if (!rule.generic) return rule.stage;
    generic ??= rule.stage;
  }
  return generic ?? 'other';
}
