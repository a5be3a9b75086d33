/** The budget's default window: at most `perTarget` key packages of one identity taken by others in it. */
export const KEY_PACKAGE_FETCH_WINDOW_MS = 3600 * 1000;

export const DEFAULT_KEY_PACKAGE_BUDGET_NAME = 'key-packages';

export interface KeyPackageBudgetOptions {
  /** The budgets' name: the same name is the same windows on every node; default `key-packages`. */
  readonly name?: string;
  /** Key packages of one target identity that others may take per window. */
  readonly perTarget: number;
  /** The window, from the first counted fetch of a target; default one hour. */
  readonly windowMs?: number;
  /** Most targets tracked at once (memory adapter; beyond it the oldest window goes first). */
  readonly maxTargets?: number;
  /** The clock (memory adapter; the Redis adapter uses the server's clock). */
  readonly now?: () => number;
}

/** Gives one reserved fetch back. Idempotent, never rejects, and never credits a later window. */
export type KeyPackageRefund = () => Promise<void>;

/**
 * How many key packages others may take of one identity (docs/architecture.md, "Group sessions",
 * "Bounds"): a fixed window per *target* identity, all callers (and in a cluster all nodes)
 * together, that begins at its first counted fetch. Per caller it would be no budget: fresh
 * identities cost nothing.
 */
export interface KeyPackageBudgets {
  /**
   * Reserves one fetch of `target`'s key packages by `caller`, atomically (concurrent calls, on any
   * node, cannot all pass the check before any is counted). Resolves the refund (call it when
   * nothing was taken: a miss costs the target nothing), or undefined when the window is spent.
   * Taking one's own (`caller === target`) is free and always allowed.
   */
  reserve(caller: string, target: string): Promise<KeyPackageRefund | undefined>;
}
