// The admin commands' one error family: a stable code, a fixed message, an exit code.

/** `usage` (2), `not_found` (3), `conflict` (4: the relay's state forbids it now), `failed` (1). */
export type AdminErrorCode = 'usage' | 'not_found' | 'conflict' | 'failed';

const EXIT: Readonly<Record<AdminErrorCode, number>> = { usage: 2, not_found: 3, conflict: 4, failed: 1 };

export class AdminError extends Error {
  override readonly name = 'AdminError';
  readonly code: AdminErrorCode;

  constructor(code: AdminErrorCode, message: string) {
    super(message);
    this.code = code;
  }

  get exitCode(): number {
    return EXIT[this.code];
  }
}

/** An error as the admin socket carries it (never a stack, never an input). */
export function adminErrorOf(error: unknown): AdminError {
  if (error instanceof AdminError) return error;
  const code = (error as { code?: unknown })?.code;
  if (code === 'ERR_STORE_INPUT') return new AdminError('usage', (error as Error).message);
  return new AdminError(
    'failed',
    `the operation failed (${typeof code === 'string' ? code : ((error as Error)?.name ?? 'error')})`,
  );
}

export function isAdminErrorCode(value: unknown): value is AdminErrorCode {
  return typeof value === 'string' && value in EXIT;
}
