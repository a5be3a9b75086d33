import {
  type Authenticator,
  DidWebResolver,
  type DpopOptions,
  dpopAuthenticator,
  signedChallengeAuthenticator,
  type TrustAnchors,
} from '@wmp/session';
import { type NodeDidWebFetcherOptions, nodeDidWebFetcher } from '@wmp/session/node';
import type { RelayAuthContext } from './auth-context.js';

/**
 * did:web resolution for `signed_challenge` (docs/wmp-profile.md, "Sessions and identities"); each
 * bound left out takes the resolver's default.
 */
export interface RelayDidWebSettings extends NodeDidWebFetcherOptions {
  /** Per fetch, default 5 s. */
  readonly timeoutMs?: number;
  /** Largest document, default 64 KiB. */
  readonly maxBytes?: number;
  /** Documents cached, default 1000. */
  readonly maxEntries?: number;
}

/** What the relay authenticates besides did:key and did:jwk (each part left out is off). */
export interface RelayAuthOptions {
  /** `x5c`: the operator's trust anchors (PEM bundle, or DER), for `x509:*` senders. */
  readonly trustAnchors?: TrustAnchors;
  /** `mtls`: the CAs the TLS server asks client certificates of (`--tls-client-ca`). */
  readonly clientCa?: TrustAnchors;
  /**
   * Anchors whose chains reach a level (core §3.5.1), highest first, for `x5c` and `mtls`: a
   * chain that also ends at one of them authenticates at that level; others the assurance table
   * rates by auth type (`RegisteredDeliveryConfig.assurance`).
   */
  readonly assuranceAnchors?: readonly { readonly level: string; readonly anchors: TrustAnchors }[];
  /** `signed_challenge` for did:web senders too. */
  readonly didWeb?: RelayDidWebSettings;
  /** `dpop`: DPoP-bound access tokens; `htu` defaults to the relay's endpoints, `jti`s go to the cluster's replay cache. */
  readonly dpop?: Omit<DpopOptions, 'replayCache' | 'htu'> & { readonly htu?: readonly string[] };
  /** More authenticators by auth type (they win over the ones above). */
  readonly extra?: Readonly<Record<string, Authenticator>>;
}

/**
 * The relay's authenticators (`RelayConfig.authenticators`) from what the operator configured.
 * Async: the X.509 verifier (pkijs) is loaded only when trust anchors or a client CA are given.
 */
export async function relayAuthenticators(
  options: RelayAuthOptions,
): Promise<(relay: RelayAuthContext) => Readonly<Record<string, Authenticator>>> {
  const x509 = options.trustAnchors || options.clientCa ? await import('@wmp/session/x509') : undefined;
  const tiers = options.assuranceAnchors ? { assuranceAnchors: options.assuranceAnchors } : {};
  const x5c = options.trustAnchors && x509?.x5cAuthenticator({ trustAnchors: options.trustAnchors, ...tiers });
  const mtls = options.clientCa && x509?.mtlsAuthenticator({ trustAnchors: options.clientCa, ...tiers });
  const { timeoutMs, maxBytes, maxEntries, ...fetcher } = options.didWeb ?? {};
  const didWeb =
    options.didWeb &&
    new DidWebResolver({
      fetcher: nodeDidWebFetcher(fetcher),
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      ...(maxBytes === undefined ? {} : { maxBytes }),
      ...(maxEntries === undefined ? {} : { maxEntries }),
    });
  return (relay) => {
    const dpop = options.dpop;
    return {
      signed_challenge: signedChallengeAuthenticator(didWeb ? { didWeb } : {}),
      ...(x5c ? { x5c } : {}),
      ...(mtls ? { mtls } : {}),
      ...(dpop
        ? {
            dpop: dpopAuthenticator({
              ...dpop,
              htu: dpop.htu ?? (() => relay.endpoints()),
              replayCache: relay.replays,
            }),
          }
        : {}),
      ...options.extra,
    };
  };
}
