import type { AssertionChecker, DocumentFetch } from '@wmp/session';
import type { Coordination } from '../coordination/contracts/coordination.js';
import type { RelayStoreLimits, RelayStores } from '../storage/contracts/relay-stores.js';
import type { EvidenceConfig, RelayChainSignatures } from './evidence/evidence-config.js';
import type { FederationConfig } from './federation/federation-config.js';
import type { BoxAppInput } from './http/http-app.js';
import type { RelayAuthenticatorsInput } from './sessions/auth-context.js';
import { ASSURANCE_LEVELS } from './support/assurance.js';
import type { RelayIdentityInput } from './support/identity.js';
import { type RelayLimits, type RelayTimings, resolveConfig } from './support/limits.js';
import type { Logger } from './support/logger.js';
import { CONSIGNMENT_MODES, type RegisteredDeliveryConfig } from './support/registered.js';
import type { RelayTlsConfig } from './support/tls.js';

/**
 * What `createRelay` and `createRelayCore` take, as a whole: the bounds (`support/limits.ts`) and
 * each part's own input, defined beside the code that reads it.
 */
export interface RelayConfig {
  /** Default: a fresh random identity (fine for tests; a deployment passes a persisted seed). */
  readonly identity?: RelayIdentityInput;
  /** Where to listen; default `127.0.0.1`, port 0 (any free port). */
  readonly host?: string;
  readonly port?: number;
  /** The public origin (`https://relay.example`); default the listening address. Endpoints and relay_chain use it. */
  readonly publicUrl?: string;
  /**
   * The stores, or a factory that gets the store caps of this config (so they are enforced by the
   * store, in the same atomic operation as each write). Default: `MemoryRelayStores`. The relay closes
   * its stores on `close()`.
   */
  readonly store?: RelayStores | ((limits: RelayStoreLimits) => RelayStores);
  readonly limits?: Partial<RelayLimits>;
  readonly timings?: Partial<RelayTimings>;
  /** The relay's own MLS key packages for `/.well-known/mls-key-packages` (default none). */
  readonly keyPackages?: readonly Record<string, unknown>[];
  readonly box?: BoxAppInput;
  /** Structured logs (JSON lines); default silent. Never gets addresses or message content. */
  readonly logger?: Logger;
  /**
   * Extra authenticators by auth type (e.g. `bearer`), or a function of the relay's context
   * (`relayAuthenticators` from `@wmp/relay-server/node`: x5c, mtls, did:web, DPoP);
   * signed_challenge (did:key, did:jwk) is on unless replaced. The well-known
   * `accepted_identifier_schemes` lists what they prove, `accepted_schemes` its families.
   */
  readonly authenticators?: RelayAuthenticatorsInput;
  /** Serve HTTPS and WSS (TLS 1.3) on the relay's port; with `clientCa`, ask for client certificates (mtls). */
  readonly tls?: RelayTlsConfig;
  /**
   * The operator's identity-assertion policy (core §5.6), e.g. `sdJwtAssertionChecker` of
   * `@wmp/session/sd-jwt`: checked on `wmp.session.authenticate` (a required policy authenticates
   * no session without an acceptable assertion) and on messages that carry assertions (-31012).
   */
  readonly identityAssertions?: AssertionChecker;
  /**
   * `wmp.resolve` on the relay's own sessions (core §5.8), offered as the `resolve` capability:
   * `endpoint` (the relay's well-known document for identities registered here; with `fetch`,
   * the domain's document of others) and, with `fetch`, `issuer_metadata` and `vctm`. `fetch`
   * must be the guarded fetcher. Default: no `resolve`.
   */
  readonly resolve?: { readonly fetch?: DocumentFetch; readonly httpOrigins?: readonly string[] };
  /** Privacy statement of the well-known document (§8.8.2). */
  readonly privacy?: Readonly<Record<string, string>>;
  /**
   * Whether per-source limits (session opens, routed bytes) also apply to loopback addresses.
   * Default false: behind a proxy on the same host every client comes from loopback, and one
   * bucket for all of them would refuse everyone.
   */
  readonly limitLoopback?: boolean;
  /**
   * Reverse proxies (load balancers) in front of the relay whose `X-Forwarded-For` names the
   * client: per-source limits then count each client, not the proxy. Only addresses listed here
   * are believed; default none.
   */
  readonly trustedProxies?: readonly string[];
  /**
   * WEAKER: over HTTP, let a request name its hop session by id alone, without the session's token
   * (for clients such as go-wmp and wmp-js that send neither `Authorization: Bearer` nor
   * `Wmp-Session-Token`). Never for group sessions, whose ids other participants know. Default off.
   */
  readonly httpSessionIdBinding?: boolean;
  /**
   * What this node shares with the other nodes of a cluster that may be lost (rate windows,
   * key-package budgets, presence, wake-ups; `connectRedisCoordination` from
   * `@wmp/relay-server/redis`), with `store` the cluster's shared stores. Default: one process
   * (`memoryCoordination`). The owner closes a given coordination, after the relay.
   */
  readonly coordination?: Coordination;
  /** This node's name in logs and metrics; default the coordination's `nodeId`. */
  readonly nodeId?: string;
  /**
   * Relay-to-relay routing (docs/federation-profile.md): static routes, peers, trust, ERDS. Left
   * out: federation is off (every recipient is kept here, nothing forwarded is taken).
   */
  readonly federation?: FederationConfig;
  /**
   * Registered delivery (core §3.3-§3.5, §7.5.1): delegation and scheduled delivery (both on by
   * default), the consignment modes and assurance levels served to recipients here, the
   * auth-type-to-assurance table, recipient metadata, and where witnessed events go. Published as
   * the well-known `erds` and `recipient_metadata`.
   */
  readonly registered?: RegisteredDeliveryConfig;
  /**
   * The evidence profile (wmp-tables §9): on by default (sessions may negotiate `evidence`),
   * records kept `P5Y`, a TSA for their tokens when given (docs/wmp-profile.md "Evidence").
   */
  readonly evidence?: EvidenceConfig;
  /**
   * When the relay signs its relay_chain entry (core §5.7): `when-needed` (default) before the
   * message leaves for another relay and when it is under evidence; `always` on every entry.
   */
  readonly relayChainSignatures?: RelayChainSignatures;
  readonly now?: () => number;
}

/**
 * The registered-delivery settings, with the lists an operator publishes in `federation.erds`
 * (`consignment_modes`, `assurance_levels`, `supported_policies`) as what is served when
 * `registered` does not say.
 */
export function registeredConfigOf(config: RelayConfig): RegisteredDeliveryConfig {
  const published = config.federation?.erds;
  const registered = config.registered ?? {};
  const known = <T extends string>(list: unknown, of: readonly T[]): T[] | undefined =>
    Array.isArray(list) ? (list.filter((x) => of.includes(x as T)) as T[]) : undefined;
  const modes = registered.consignmentModes ?? known(published?.consignment_modes, CONSIGNMENT_MODES);
  const levels = registered.assuranceLevels ?? known(published?.assurance_levels, ASSURANCE_LEVELS);
  const policies =
    registered.supportedPolicies ?? known(published?.supported_policies, published?.supported_policies ?? []);
  return {
    ...registered,
    ...(modes ? { consignmentModes: modes } : {}),
    ...(levels ? { assuranceLevels: levels } : {}),
    ...(policies ? { supportedPolicies: policies } : {}),
  };
}

/**
 * The caps the stores enforce for `config` (in the same atomic operation as each write): what a
 * store factory gets, and what an embedder that opens a store itself (PostgreSQL opens
 * asynchronously) passes to it.
 */
export function relayStoreLimits(config: RelayConfig): RelayStoreLimits {
  const { limits } = resolveConfig(config);
  return {
    queue: {
      maxQueued: limits.maxQueued,
      maxBytes: limits.maxQueueBytes,
      maxQueuedPerSender: limits.maxQueuedPerSender,
      maxBytesPerSender: limits.maxQueueBytesPerSender,
      maxTotalBytes: limits.maxTotalQueueBytes,
    },
    sessions: { maxSessions: limits.maxSessions, maxPendingSessions: limits.maxPendingSessions },
    evidence: { maxRecords: limits.maxEvidenceRecords },
  };
}
