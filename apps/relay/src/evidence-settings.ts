// The evidence profile's settings (wmp-tables §9): whether the relay offers `evidence`, how long
// records are kept, the TSA of their tokens, and when relay_chain entries are signed. Parsed with
// the other settings (pure); the TSA anchors file is read at start (a bad one stops the start,
// exit 2, naming the flag).
import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import {
  DEFAULT_EVIDENCE_RETENTION,
  type EvidenceConfig,
  parseDuration,
  type RelayChainSignatures,
} from '@wmp/relay-server';
import { TsaClient } from '@wmp/session/timestamp';
import type { EvidenceSettings } from './config-types.js';
import { ConfigError } from './config-values.js';
import { RelayAppError } from './errors.js';

type Raw = (flag: string) => { text: string; fromEnv: boolean } | undefined;

/** `--evidence`'s values (true and false as the other switches take them from variables). */
const SWITCH = new Map([
  ['on', true],
  ['off', false],
  ['true', true],
  ['false', false],
]);

const SIGNATURE_MODES: readonly RelayChainSignatures[] = ['when-needed', 'always'];

function named(flag: string, fromEnv: boolean): string {
  return fromEnv ? `WMP_${flag.replace(/-/g, '_').toUpperCase()}` : `--${flag}`;
}

/** The evidence settings of the flags and variables; `ConfigError` naming the one at fault. */
export function evidenceSettings(raw: Raw): EvidenceSettings {
  const on = raw('evidence');
  if (on !== undefined && !SWITCH.has(on.text)) {
    throw new ConfigError(`${named('evidence', on.fromEnv)}: "${on.text}" is not on or off`);
  }
  const retention = raw('evidence-retention');
  if (retention !== undefined && parseDuration(retention.text) === undefined) {
    throw new ConfigError(
      `${named('evidence-retention', retention.fromEnv)}: "${retention.text}" is not an ISO 8601 duration such as P5Y or P10Y`,
    );
  }
  const mode = raw('relay-chain-signatures');
  if (mode !== undefined && !SIGNATURE_MODES.includes(mode.text as RelayChainSignatures)) {
    throw new ConfigError(
      `${named('relay-chain-signatures', mode.fromEnv)}: "${mode.text}" is not when-needed or always`,
    );
  }
  const [url, anchors] = [raw('tsa-url'), raw('tsa-anchors')];
  if ((url === undefined) !== (anchors === undefined)) {
    throw new ConfigError(
      '--tsa-url and --tsa-anchors go together: a TSA and the roots its tokens are checked against',
    );
  }
  if (url !== undefined && !/^https?:\/\/[^\s/?#]+/.test(url.text)) {
    throw new ConfigError(`${named('tsa-url', url.fromEnv)}: "${url.text}" is not an http(s) URL`);
  }
  return {
    enabled: on === undefined || SWITCH.get(on.text)!,
    retention: retention?.text ?? DEFAULT_EVIDENCE_RETENTION,
    tsa: url === undefined ? undefined : { url: url.text, anchorsFile: anchors!.text },
    relayChainSignatures: (mode?.text as RelayChainSignatures | undefined) ?? 'when-needed',
  };
}

/** A TSA anchors file that cannot be used; the message names the flag and the problem, never the content. */
export class EvidenceSettingsError extends RelayAppError {
  constructor(problem: string) {
    super('ERR_EVIDENCE_SETTINGS', `--tsa-anchors: ${problem}`);
    this.name = 'EvidenceSettingsError';
  }
}

/** The relay library's evidence config: the TSA client made from the anchors file (relative to `cwd`). */
export function loadEvidence(settings: EvidenceSettings, cwd: string): EvidenceConfig {
  const base = { enabled: settings.enabled, retention: settings.retention };
  if (settings.tsa === undefined) return base;
  const file = isAbsolute(settings.tsa.anchorsFile) ? settings.tsa.anchorsFile : resolve(cwd, settings.tsa.anchorsFile);
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch {
    throw new EvidenceSettingsError(`cannot read ${settings.tsa.anchorsFile}`);
  }
  let client: TsaClient;
  try {
    client = new TsaClient({ url: settings.tsa.url, anchors: pem });
  } catch {
    throw new EvidenceSettingsError(`${settings.tsa.anchorsFile} holds no usable PEM certificate`);
  }
  return { ...base, tsa: { url: settings.tsa.url, client } };
}
