import type { Capabilities } from '@wmp/jsonrpc-envelope';
import { type FetchLike, ReconnectPolicy } from '@wmp/transports';
import type { WmpClientOptions } from './types.js';

/** What a relay client offers: messaging, relaying to third parties, offline with statuses, flows. */
export const DEFAULT_CLIENT_CAPABILITIES: Capabilities = { messaging: {}, relay: {}, offline: {}, flows: {} };

const DEFAULTS = {
  ttl: 86_400,
  requestTimeoutMs: 30_000,
  maxPendingRequests: 256,
  maxWaitingCalls: 256,
  maxPendingMessages: 1000,
  maxSeenIds: 8192,
  sendRetries: 3,
  maxFlows: 64,
  maxGroups: 15,
  fallbackWindowMs: 10_000,
} as const;

/** The options with their defaults (but `store`), `reconnect` as its policy (undefined: never). */
export type ResolvedOptions = Required<
  Omit<
    WmpClientOptions,
    | 'store'
    | 'WebSocket'
    | 'fetch'
    | 'reconnect'
    | 'fallback'
    | 'register'
    | 'relay'
    | 'tls'
    | 'signatures'
    | 'timestamp'
    | 'present'
  >
> &
  Pick<WmpClientOptions, 'WebSocket' | 'fallback' | 'register' | 'relay' | 'signatures' | 'timestamp' | 'present'> & {
    readonly fetch: FetchLike;
    readonly policy: ReconnectPolicy | undefined;
  };

export function resolveOptions(options: WmpClientOptions): ResolvedOptions {
  return {
    identity: options.identity,
    transport: options.transport ?? 'auto',
    allowInsecure: options.allowInsecure ?? false,
    x509Auth: options.x509Auth ?? 'x5c',
    capabilities: options.capabilities ?? DEFAULT_CLIENT_CAPABILITIES,
    ttl: options.ttl ?? DEFAULTS.ttl,
    requestTimeoutMs: options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs,
    maxPendingRequests: options.maxPendingRequests ?? DEFAULTS.maxPendingRequests,
    maxWaitingCalls: options.maxWaitingCalls ?? DEFAULTS.maxWaitingCalls,
    maxPendingMessages: options.maxPendingMessages ?? DEFAULTS.maxPendingMessages,
    maxSeenIds: options.maxSeenIds ?? DEFAULTS.maxSeenIds,
    sendRetries: options.sendRetries ?? DEFAULTS.sendRetries,
    maxFlows: options.maxFlows ?? DEFAULTS.maxFlows,
    maxGroups: options.maxGroups ?? DEFAULTS.maxGroups,
    fallbackWindowMs: options.fallbackWindowMs ?? DEFAULTS.fallbackWindowMs,
    // Called unbound: browsers throw "Illegal invocation" on fetch with another `this`.
    fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    policy: options.reconnect === false ? undefined : new ReconnectPolicy(options.reconnect ?? {}),
    ...(options.WebSocket ? { WebSocket: options.WebSocket } : {}),
    ...(options.fallback ? { fallback: options.fallback } : {}),
    ...(options.register === undefined ? {} : { register: options.register }),
    ...(options.relay === undefined ? {} : { relay: options.relay }),
    ...(options.signatures === undefined ? {} : { signatures: options.signatures }),
    ...(options.timestamp === undefined ? {} : { timestamp: options.timestamp }),
    ...(options.present === undefined ? {} : { present: options.present }),
  };
}
