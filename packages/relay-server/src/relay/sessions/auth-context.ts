import type { Authenticator, ReplayCache } from '@wmp/session';

/** What the relay gives the authenticators it is configured with, once its engine exists. */
export interface RelayAuthContext {
  /** Single-use values shared by every node of a cluster (DPoP `jti`s): `coordination.replays`. */
  readonly replays: ReplayCache;
  /** The relay's WMP endpoint URLs (`https://…/wmp`, `wss://…/wmp`), as of now (the origin may be set on listen). */
  endpoints(): readonly string[];
}

/** Authenticators by `auth.type`, or a function of the relay's context that makes them. */
export type RelayAuthenticatorsInput =
  | Readonly<Record<string, Authenticator>>
  | ((relay: RelayAuthContext) => Readonly<Record<string, Authenticator>>);

/** The WebSocket URL of an http(s) origin. */
export function wsOrigin(origin: string): string {
  return origin.replace(/^http/, 'ws');
}

/** The endpoint URLs of an origin, as `htu` of a DPoP proof may name them. */
export function endpointUrls(origin: string): readonly string[] {
  return [`${origin}/wmp`, `${wsOrigin(origin)}/wmp`];
}
