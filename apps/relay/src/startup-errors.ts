// What a start failure means for the operator: errors that come from a setting (exit 2, naming
// it) rather than from the machine. Pure: the message only, no process access.
import type { AppConfig } from './config.js';

/** The message of a start failure caused by a setting, or undefined for any other failure. */
export function startupUsageError(
  error: { code?: string | undefined; message: string },
  config: AppConfig,
): string | undefined {
  if (error.code === 'ERR_STORE_LOCKED') {
    return `--data-dir ${config.dataDir}: in use by another wmp-relay process (one process per data directory; run a cluster on PostgreSQL instead)`;
  }
  // A trust-anchor or TLS file that cannot be used: its message names the flag.
  if (error.code === 'ERR_AUTH_FILE') return error.message;
  return undefined;
}
