// The relay's version: apps/relay's package.json, read beside whatever runs (src/ from the
// sources, dist/ built or bundled, an installed package): each sits one folder below it.
import { readFileSync } from 'node:fs';

function readVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

/** `wmp-relay --version`, `/health`'s `version`, `wmp_relay_build_info{version}`. */
export const RELAY_VERSION: string = readVersion();
