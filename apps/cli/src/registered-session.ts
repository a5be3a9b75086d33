// What registered delivery asks of a connection (core §5.5, wmp-tables §9): a session of its own
// under evidence, kept in the home apart from the plain one (decision 0700), and the TSA a
// message gets its RFC 3161 token from, with the anchors tokens are checked against.
import {
  type ClientStore,
  DEFAULT_CLIENT_CAPABILITIES,
  type TimestampOptions,
  type WmpClient,
  type WmpClientOptions,
} from '@wmp/client-sdk';
import { EVIDENCE_EVENT_TYPES } from '@wmp/jsonrpc-envelope';
import type { CommandContext, OptionSpec } from './command.js';
import { printable } from './commands/common.js';
import { CliError, UsageError } from './errors.js';
import { readPem } from './tls.js';

/** Where the evidence session lives in the home's store (the SDK keeps the plain one under `client/`). */
export const EVIDENCE_STORE_PREFIX = 'cli/evidence/';

/** What `connectLive` passes to the SDK besides identity, TLS and reconnection. */
export type SessionChoice = Pick<WmpClientOptions, 'store' | 'capabilities' | 'timestamp' | 'register'>;

/** Whether a command with this choice needs a connection of its own (not the REPL's plain one). */
export function ownConnection(session: SessionChoice | undefined): boolean {
  return session !== undefined && (session.store !== undefined || session.timestamp !== undefined);
}

/** `store` seen through `prefix`: the SDK's keys land under it and it lists only its own. */
export function prefixedStore(store: ClientStore, prefix: string): ClientStore {
  return {
    get: (key) => store.get(prefix + key),
    set: (key, value) => store.set(prefix + key, value),
    delete: (key) => store.delete(prefix + key),
    keys: async (p) => (await store.keys(prefix + p)).map((k) => k.slice(prefix.length)),
  };
}

/** Capabilities of a session under evidence: the defaults and every event type wmp-tables §9 names. */
export const EVIDENCE_CAPABILITIES = Object.freeze({
  ...DEFAULT_CLIENT_CAPABILITIES,
  evidence: { event_types: [...EVIDENCE_EVENT_TYPES] },
});

/** `--tsa-anchors <file>` of the commands that check RFC 3161 tokens. */
export const tsaAnchorsOption: OptionSpec = {
  kind: 'path',
  help: "PEM file of the roots a TSA's certificate chains to: timestamp tokens are checked against them",
};

/** `--timestamp <tsa-url>` of `wmp send`. */
export const timestampOption: OptionSpec = {
  kind: 'text',
  placeholder: 'tsa-url',
  help: 'get an RFC 3161 token over the message from this time-stamping authority (needs --tsa-anchors)',
};

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}

/** The client's TSA settings from `--timestamp` and `--tsa-anchors` (undefined: neither given). */
export async function timestampOf(ctx: CommandContext): Promise<TimestampOptions | undefined> {
  const url = ctx.options.timestamp as string | undefined;
  const file = ctx.options['tsa-anchors'] as string | undefined;
  if (url !== undefined && file === undefined) {
    throw new UsageError(
      '--timestamp needs --tsa-anchors: the roots the TSA token is checked against',
      ctx.command.path.join(' '),
    );
  }
  if (url !== undefined && !isHttpUrl(url)) {
    throw new UsageError(
      `--timestamp: "${printable(url.slice(0, 200))}" is not an http(s) URL`,
      ctx.command.path.join(' '),
    );
  }
  if (file === undefined) return undefined;
  const pem = await readPem('--tsa-anchors', file);
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new UsageError(`--tsa-anchors: ${file} holds no PEM certificate`, ctx.command.path.join(' '));
  }
  return { anchors: pem, ...(url === undefined ? {} : { url }) };
}

/**
 * The session a command connects with: the home's evidence session, or the plain one with a TSA;
 * undefined for the plain one as it is (a REPL's connection serves then).
 */
export async function sessionChoice(ctx: CommandContext, evidence: boolean): Promise<SessionChoice | undefined> {
  const timestamp = await timestampOf(ctx);
  if (!evidence && timestamp === undefined) return undefined;
  return {
    ...(evidence
      ? { store: prefixedStore(ctx.home.store(), EVIDENCE_STORE_PREFIX), capabilities: EVIDENCE_CAPABILITIES }
      : {}),
    ...(timestamp ? { timestamp } : {}),
  };
}

/** Whether `client`'s session negotiated evidence with some event type (what the relay records by). */
export function underEvidence(client: Pick<WmpClient, 'capabilities'>): boolean {
  const types = (client.capabilities.evidence as { event_types?: unknown } | undefined)?.event_types;
  return Array.isArray(types) && types.length > 0;
}

/** `wmp send --evidence` to a relay whose session is not under evidence: nothing is sent. */
export function noEvidenceError(relay: string): CliError {
  return new CliError(
    `${relay} does not offer evidence: nothing was sent`,
    'Its operator turns it on with --evidence on; or send without --evidence.',
    { relay, reason: 'evidence_unavailable' },
  );
}
