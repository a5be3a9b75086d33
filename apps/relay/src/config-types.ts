// What wmp-relay starts from: the settings after defaults and validation.
import type { FederationConfig, LogLevel, RelayChainSignatures, RelayLimits, RelayTimings } from '@wmp/relay-server';
import type { AuthSettings } from './auth-config.js';
import type { BoxSettings } from './config-spec.js';
import type { RegisteredSettings } from './registered-config.js';

/** The evidence profile's settings (wmp-tables §9), parsed by evidence-settings.ts. */
export interface EvidenceSettings {
  readonly enabled: boolean;
  /** An ISO 8601 duration (default P5Y). */
  readonly retention: string;
  /** `--tsa-url` and `--tsa-anchors` (a PEM file, as given). */
  readonly tsa: { readonly url: string; readonly anchorsFile: string } | undefined;
  readonly relayChainSignatures: RelayChainSignatures;
}

/** Where a cluster node keeps what the nodes share. The URLs may hold passwords: never print them. */
export interface ClusterSettings {
  readonly databaseUrl: string;
  readonly redisUrl: string;
}

/** One relay key for every node of a cluster: a file (64 hex digits, like the data directory's) or the seed itself. */
export type RelayKeySource = { readonly file: string } | { readonly seed: Uint8Array };

/** Everything `wmp-relay` needs to start, after defaults and validation. */
export interface AppConfig {
  readonly port: number;
  readonly host: string;
  /** As given (relative to the working directory); the caller resolves it. */
  readonly dataDir: string;
  /** The public origin; `undefined`: `http://127.0.0.1:<listening port>`. */
  readonly publicUrl: string | undefined;
  /** Memory store and a fresh identity: nothing is read from or written to disk. */
  readonly ephemeral: boolean;
  /** Directory box (cards, publish needs cards) or relay-only. */
  readonly directory: boolean;
  /** Per-source limits apply to loopback addresses too (off: behind a local proxy every client is loopback). */
  readonly limitLoopback: boolean;
  /** Proxies whose X-Forwarded-For names the client (per-source limits count clients, not the proxy). */
  readonly trustedProxies: readonly string[];
  /** HTTP requests may name a hop session by id alone (weaker; for clients that send no token). */
  readonly httpSessionIdBinding: boolean;
  readonly logLevel: LogLevel;
  /** Serve the SDK's browser demo page at /demo/ (apps/relay/demo, bundled into dist/demo). */
  readonly demo: boolean;
  /** PostgreSQL and Redis: this process is one node of a cluster (undefined: SQLite or memory). */
  readonly cluster: ClusterSettings | undefined;
  /** This node's id in logs, metrics and presence; undefined: hostname and pid, taken at start. */
  readonly nodeId: string | undefined;
  /** The relay key: a file, or the seed from `WMP_RELAY_KEY`; undefined: the data directory's own. */
  readonly relayKey: RelayKeySource | undefined;
  /** Only what a flag or variable set: the rest is the relay library's default (one place for defaults). */
  readonly limits: Partial<RelayLimits>;
  readonly timings: Partial<RelayTimings>;
  readonly box: Partial<BoxSettings>;
  /** Trust anchors, TLS and did:web (issue 16). */
  readonly auth?: AuthSettings;
  /** The identity-assertion policy file (`--assertion-policy`), as given; undefined: none. */
  readonly assertionPolicyFile?: string | undefined;
  /** Relay-to-relay routing: mode, static routes, peers, trusted peers, the published ERDS object. */
  readonly federation: FederationConfig;
  /** Registered delivery: delegation, scheduled delivery, assurance, recipient metadata. */
  readonly registered: RegisteredSettings;
  /** The evidence profile: on or off, retention, the TSA, when relay_chain entries are signed. */
  readonly evidence: EvidenceSettings;
}

export type ParseResult =
  | { readonly kind: 'config'; readonly config: AppConfig }
  | { readonly kind: 'help'; readonly text: string }
  | { readonly kind: 'version' }
  | { readonly kind: 'error'; readonly message: string };

/** Exit code for a bad flag or value (usage error), as in BSD sysexits' EX_USAGE tradition. */
export const EXIT_USAGE = 2;
