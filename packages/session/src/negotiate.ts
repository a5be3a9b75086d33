import {
  type Capabilities,
  CapabilityNotSupportedError,
  InvalidParamsError,
  MlsError,
  type Security,
  VersionNotSupportedError,
} from '@wmp/jsonrpc-envelope';

export const WMP_VERSION = '0.1';

function parseVersion(v: string): [number, number] | undefined {
  const m = /^(\d+)\.(\d+)$/.exec(v);
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

/**
 * The responder's choice (core §2.2.2): the highest supported version <= the offered one with the
 * same MAJOR; otherwise -31013 with `supported_versions`.
 */
export function negotiateVersion(offered: string, supported: readonly string[]): string {
  const o = parseVersion(offered);
  let best: [number, number] | undefined;
  let bestText: string | undefined;
  for (const s of supported) {
    const v = parseVersion(s);
    if (!v || !o || v[0] !== o[0] || v[1] > o[1]) continue;
    if (!best || v[1] > best[1]) {
      best = v;
      bestText = s;
    }
  }
  if (!bestText) throw new VersionNotSupportedError({ supported_versions: [...supported] });
  return bestText;
}

/** Narrows one capability's params: numbers to the smaller limit, lists to the intersection. */
function narrow(offered: unknown, ours: Record<string, unknown>): Record<string, unknown> {
  if (offered === null || typeof offered !== 'object' || Array.isArray(offered)) return { ...ours };
  const out: Record<string, unknown> = {};
  for (const [key, mine] of Object.entries(ours)) {
    const theirs = (offered as Record<string, unknown>)[key];
    if (typeof mine === 'number' && typeof theirs === 'number') out[key] = Math.min(mine, theirs);
    else if (Array.isArray(mine) && Array.isArray(theirs))
      out[key] = mine.includes('*') ? [...theirs] : mine.filter((x) => theirs.includes(x));
    else if (typeof mine === 'boolean' && typeof theirs === 'boolean') out[key] = mine && theirs;
    else out[key] = mine;
  }
  return out;
}

/**
 * Capability intersection (core §4.2.1): only capabilities both sides name are active, each with
 * params narrowed to what both accept. `supported` holds the responder's own limits.
 */
export function negotiateCapabilities(offered: Capabilities | undefined, supported: Capabilities): Capabilities {
  const result: Record<string, unknown> = {};
  for (const [name, ours] of Object.entries(supported)) {
    if (!offered || !(name in offered)) continue;
    result[name] = narrow((offered as Record<string, unknown>)[name], (ours ?? {}) as Record<string, unknown>);
  }
  return result as Capabilities;
}

/** What a responder is willing to run: modes, and MLS cipher suites in preference order. */
export interface SecurityPolicy {
  readonly modes: readonly Security['mode'][];
  readonly cipherSuites: readonly number[];
}

export const DEFAULT_SECURITY_POLICY: SecurityPolicy = { modes: ['tls', 'mls', 'mls-optional'], cipherSuites: [1, 2] };

/**
 * Security mode selection (core §4.2.3). A mode we do not run is -31005 (`capability: security`);
 * for `mls` and `mls-optional` the suite is our most preferred one among those offered (an offer
 * without `cipher_suites` offers 0x0001, the suite every implementation must support), and no
 * common suite is -31004 naming ours. `mls-optional` keeps the offered `encrypted_capabilities`;
 * `mls` needs none (everything is encrypted) and `tls` carries no MLS fields.
 */
export function negotiateSecurity(offered: Security | undefined, policy: SecurityPolicy): Security {
  const requested = offered ?? { mode: 'tls' as const };
  if (!policy.modes.includes(requested.mode)) {
    throw new CapabilityNotSupportedError({ capability: 'security', unsupported: requested.mode });
  }
  if (requested.mode === 'tls') return { mode: 'tls' };
  const suites = requested.cipher_suites ?? [1];
  const suite = policy.cipherSuites.find((s) => suites.includes(s));
  if (suite === undefined) {
    throw new MlsError({ reason: 'no_common_cipher_suite', supported_cipher_suites: [...policy.cipherSuites] });
  }
  const out: Security = { mode: requested.mode, cipher_suite: suite };
  if (requested.mode === 'mls-optional' && requested.encrypted_capabilities) {
    return { ...out, encrypted_capabilities: [...requested.encrypted_capabilities] };
  }
  return out;
}

/** Applies `wmp.capability.update` (core §4.2.4) and returns the new full set. */
export function updateCapabilities(
  current: Capabilities,
  add: Capabilities | undefined,
  remove: readonly string[] | undefined,
  supported: Capabilities,
): Capabilities {
  const next: Record<string, unknown> = { ...current };
  for (const name of remove ?? []) delete next[name];
  if (add) {
    for (const name of Object.keys(add)) {
      if (!(name in supported)) throw new CapabilityNotSupportedError({ capability: name });
    }
    Object.assign(next, negotiateCapabilities(add, supported));
  }
  if (Object.keys(next).length > 64) throw new InvalidParamsError({ reason: 'too many capabilities' });
  return next as Capabilities;
}
