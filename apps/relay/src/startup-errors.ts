// What a start failure means for the operator: errors that come from a setting (exit 2, naming
// it) rather than from the machine. Pure: the message only, no process access. A message never
// repeats a database or Redis URL (they may hold passwords).
import type { AppConfig } from './config.js';

interface StartError {
  readonly code?: string | undefined;
  readonly name?: string;
  readonly message: string;
}

type Explain = (error: StartError, config: AppConfig) => string;

/** By error code (the stores' and the coordination's stable codes), what to tell the operator. */
const BY_CODE: Readonly<Record<string, Explain>> = {
  ERR_STORE_LOCKED: (_e, config) =>
    `--data-dir ${config.dataDir}: in use by another wmp-relay process (one process per data directory; run a cluster on PostgreSQL instead)`,
  // "database unreachable", "database refused the credentials", "database does not exist".
  ERR_STORE_UNAVAILABLE: (e) => `--database-url: ${e.message}`,
  ERR_STORE_INPUT: (e) => `--database-url: ${e.message}`,
  ERR_STORE_SCHEMA: (e) => `--database-url: ${e.message} (upgrade this node to the cluster's version)`,
  ERR_COORDINATION_UNAVAILABLE: () => '--redis-url: Redis did not answer (is it running and reachable?)',
  // A trust-anchor or TLS file that cannot be used: its message names the flag.
  ERR_AUTH_FILE: (e) => e.message,
  // The identity-assertion policy file: its message names the flag.
  ERR_ASSERTION_POLICY: (e) => e.message,
  ERR_DEMO_PAGE: (e) => e.message,
  // The TSA anchors file: its message names the flag.
  ERR_EVIDENCE_SETTINGS: (e) => e.message,
};

/** By error class name, for errors without a code. */
const BY_NAME: Readonly<Record<string, Explain>> = {
  IdentityFileError: (e) => `--relay-key-file: ${e.message}`,
};

/** The message of a start failure caused by a setting, or undefined for any other failure. */
export function startupUsageError(error: StartError, config: AppConfig): string | undefined {
  const byCode = error.code === undefined ? undefined : BY_CODE[error.code];
  if (byCode !== undefined) return byCode(error, config);
  // The data directory's own key is the relay's to look after (exit 1); a given key file is a setting.
  if (config.relayKey === undefined || !('file' in config.relayKey)) return undefined;
  const byName = error.name === undefined ? undefined : BY_NAME[error.name];
  return byName?.(error, config);
}
