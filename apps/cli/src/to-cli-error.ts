// Errors from the layers below (WMP answers, transports, fetch, the OHAN box, the SDK) as CLI
// errors with an exit code and a hint. Matching is on stable codes, never on message text.
import {
  ClientStoreError,
  GroupError,
  type GroupErrorCode,
  IdentityError,
  isConnectionLost,
  MailboxError,
  type MailboxErrorCode,
  tlsFailureOf,
  WmpClientError,
} from '@wmp/client-sdk';
import { ErrorCode, WmpError } from '@wmp/jsonrpc-envelope';
import { OHAN_API_PATH } from '@wmp/ohan-seal';
import { CliError, NotFoundError, UnreachableError, UsageError } from './errors.js';
import { tlsCliError } from './tls-errors.js';

const NOT_A_BOX = `Check the URL: it must be a WMP relay with an OHAN box (${OHAN_API_PATH}).`;

/** What to do about a WMP error answer, by code. */
const WMP_HINTS: Readonly<Record<number, string>> = {
  [ErrorCode.NotAuthorized]:
    'The relay refused this identity or action; check the recipient and your identity (wmp keys show).',
  [ErrorCode.RateLimited]: 'The relay is rate limiting you; wait a little and try again.',
  [ErrorCode.QueueFull]:
    "The recipient's queue on the relay is full; try again later or use sealed mail (wmp mail send).",
  [ErrorCode.ParticipantNotFound]: 'Check the identity (did:key:...) and that it is known to this relay.',
  [ErrorCode.CapabilityNotSupported]: 'This relay does not offer what the command needs; try another relay.',
  [ErrorCode.VersionNotSupported]: 'The relay speaks another WMP version; try another relay or update wmp.',
  [ErrorCode.SessionExpired]: 'The session expired; run the command again.',
  [ErrorCode.SessionNotFound]: 'The relay no longer knows this session; run the command again.',
  [ErrorCode.FlowError]: 'Check the flow id and its state (wmp flow --help).',
  [ErrorCode.MlsError]:
    'The group state disagrees with the others; check that everyone runs the same group (wmp group --help).',
  [ErrorCode.InvalidParams]: 'The relay refused the request as malformed; check the arguments.',
};

/** Node and undici network error codes that mean "could not reach it". */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/**
 * Codes that mean the relay did not answer, although the connection was not lost: a request that
 * timed out, a client that gave up reconnecting. What a lost connection is, the SDK decides
 * (`isConnectionLost`, the definition its reconnects use).
 */
const NO_ANSWER_CODES = new Set(['ERR_REQUEST_TIMEOUT', 'ERR_RECONNECT_FAILED']);

export const UNREACHABLE_HINT =
  'Check the URL and that the relay is running (npm start starts one on http://127.0.0.1:8080).';

/** Why the relay was not reached, as a code (`ECONNRESET`, `ERR_REQUEST_TIMEOUT`, ...), else `network`. */
export function unreachableCodeOf(error: unknown): string {
  return unreachableCode(error) ?? 'network';
}

/** The code of the first error along `error`'s `cause` chain that says the relay was not reached. */
function unreachableCode(error: unknown): string | undefined {
  let e: unknown = error;
  for (let depth = 0; depth < 5 && e; depth++) {
    const code = (e as { code?: unknown }).code;
    // The one lost connection without a string code: a POST answered -32603 `closed`.
    if (isConnectionLost(e)) return typeof code === 'string' ? code : 'closed';
    if (typeof code === 'string' && (NETWORK_CODES.has(code) || NO_ANSWER_CODES.has(code))) return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

type Kind = 'failed' | 'not_found' | 'unreachable' | 'usage';
type Make = (message: string, hint: string, details: Record<string, unknown>) => CliError;
const KINDS: Readonly<Record<Kind, Make>> = {
  failed: (m, h, d) => new CliError(m, h, d),
  not_found: (m, h, d) => new NotFoundError(m, h, d),
  unreachable: (m, h, d) => new UnreachableError(m, h, d),
  usage: (m, h) => new UsageError(m, undefined, h),
};

/** Each mailbox (OHAN box) error: its kind, what went wrong at `relay`, and what to do. */
const MAILBOX: Readonly<Record<MailboxErrorCode, { kind: Kind; text: string; hint: string }>> = {
  invalid_event: {
    kind: 'failed',
    text: 'the box refused the sealed event',
    hint: 'Check that your clock is right; if it is, report this (wmp or the relay has a bug).',
  },
  invalid_card: {
    kind: 'failed',
    text: 'the card was refused',
    hint: 'Relays on a card must be https:// origins (http:// only on loopback), 1 to 16 of them, no repeats.',
  },
  bad_request: {
    kind: 'failed',
    text: 'the box refused the request',
    hint: 'Check the arguments; see the command --help.',
  },
  stamp_required: {
    kind: 'failed',
    text: 'the box wants a proof-of-work stamp from strangers',
    hint: 'Send again without --contact (wmp then mines the stamp the box asks for).',
  },
  not_registered: {
    kind: 'not_found',
    text: 'the directory has no card for you or for the recipient',
    hint: 'Publish your card there (wmp card publish --relay <url>) and ask the recipient to publish theirs.',
  },
  unauthorized: {
    kind: 'failed',
    text: 'the box refused the request signature',
    hint: "Check that your clock is right (within 5 minutes) and that the URL is the relay's public origin exactly.",
  },
  not_found: {
    kind: 'not_found',
    text: 'not found',
    hint: 'A relay-only box has no card directory; use a relay started in directory mode.',
  },
  sender_limit: {
    kind: 'failed',
    text: 'the box holds as many undelivered events from you as it allows',
    hint: 'Wait until the recipient fetches their mail, or ask them to allow you (wmp allow add <your did>).',
  },
  rate_limited: { kind: 'failed', text: 'the box is rate limiting you', hint: 'Wait a few seconds and try again.' },
  too_large: { kind: 'failed', text: 'the message is too large for the box', hint: 'Send a shorter message.' },
  recipient_full: {
    kind: 'failed',
    text: "the recipient's box is full",
    hint: 'Try again after they fetch their mail (or ask them to allow you: contacts get room first).',
  },
  box_full: { kind: 'failed', text: 'the box is full', hint: 'Try again later.' },
  unavailable: {
    kind: 'unreachable',
    text: 'the box is busy and cannot check requests now',
    hint: 'Try again in a minute.',
  },
  internal: {
    kind: 'failed',
    text: 'the box failed (internal error)',
    hint: 'Try again later; tell the relay operator if it persists.',
  },
  relay_error: {
    kind: 'failed',
    text: 'the relay answered with an HTTP error',
    hint: NOT_A_BOX,
  },
  network: { kind: 'unreachable', text: 'box unreachable', hint: 'UNREACHABLE' },
  bad_response: {
    kind: 'failed',
    text: 'the box answered something unexpected',
    hint: NOT_A_BOX,
  },
  no_relays: {
    kind: 'not_found',
    text: 'you have no relays yet',
    hint: 'Publish your card first: wmp card publish --relay <url>',
  },
  invalid_key: { kind: 'usage', text: 'not an Ed25519 key', hint: 'Give a did:key:z6Mk... or a z6Mk... Multikey.' },
  invalid_envelope: {
    kind: 'failed',
    text: 'the message cannot be sealed',
    hint: 'Report this: wmp built a bad envelope.',
  },
  stamp_too_costly: {
    kind: 'failed',
    text: 'the box asks strangers for a stamp stronger than wmp will mine',
    hint: 'Ask the recipient to allow you (wmp allow add <your did>), then send with --contact.',
  },
  tls_options: {
    kind: 'failed',
    text: 'TLS options cannot be used here',
    hint: 'Report this: wmp passed TLS options to the wrong mailbox.',
  },
};

/** What to do about a group error, by code (the kind is `failed` unless listed in GROUP_NOT_FOUND). */
const GROUP_HINTS: Partial<Record<GroupErrorCode, string>> = {
  ERR_GROUP_UNKNOWN: 'See the groups of this home: wmp group list',
  ERR_GROUP_NOT_PARTICIPANT: 'Only the participants named at wmp group create can ever be added; make a new group.',
  ERR_GROUP_NO_KEY_PACKAGE: 'Ask them to publish key packages at this relay: wmp group keys',
  ERR_GROUP_NOT_JOINED: 'A member must add you first (wmp group add), then: wmp group join <id>',
  ERR_GROUP_REMOVED: 'You were removed from this group; a member can add you again.',
  ERR_GROUP_NO_RECIPIENTS: 'Add members first: wmp group add <group> <did>',
  ERR_GROUP_COMMIT_CONFLICT: 'Others changed the group at the same time; try again.',
  ERR_GROUP_OUT_OF_SYNC: 'Try again; if it persists, the group cannot be read from this home any more.',
  ERR_GROUP_STATE: 'The group state in the home is damaged; leave it and ask to be added to a new group.',
};
const GROUP_NOT_FOUND = new Set<GroupErrorCode>(['ERR_GROUP_UNKNOWN', 'ERR_GROUP_NO_KEY_PACKAGE']);

/** A mailbox error as a CLI error naming the relay (never the key or the content); `prefix` goes before it. */
export function mailboxCliError(error: MailboxError, prefix = ''): CliError {
  const tls = error.code === 'network' ? tlsFailureOf(error) : undefined;
  if (tls) return tlsCliError(tls, error.relay);
  const entry = MAILBOX[error.code];
  const where = error.relay ? ` at ${error.relay}` : '';
  const cause = error.code === 'network' ? unreachableCode(error.cause) : undefined;
  const why = [error.status ? `HTTP ${error.status}` : '', error.reason ?? '', cause ?? ''].filter(Boolean).join(', ');
  const hint = entry.hint === 'UNREACHABLE' ? UNREACHABLE_HINT : entry.hint;
  const details = {
    box_code: error.code,
    ...(error.relay ? { relay: error.relay } : {}),
    ...(error.status ? { status: error.status } : {}),
  };
  return KINDS[entry.kind](`${prefix}${entry.text}${where}${why ? ` (${why})` : ''}`, hint, details);
}

/** Whether an error means a relay could not be reached (or the connection to it was lost). */
export function isUnreachable(error: unknown): boolean {
  // Reached, but TLS failed: another connection attempt fails the same way.
  if (tlsFailureOf(error)) return false;
  if (error instanceof MailboxError) return error.code === 'network';
  // fetch rejects with a TypeError exactly when the network failed (the Fetch standard's
  // "network error"); discovery wraps it.
  if (error instanceof WmpClientError && error.code === 'ERR_CLIENT_DISCOVERY' && error.cause instanceof TypeError) {
    return true;
  }
  return unreachableCode(error) !== undefined;
}

export function toCliError(error: unknown): CliError {
  if (error instanceof CliError) return error;
  if (error instanceof MailboxError) return mailboxCliError(error);
  if (error instanceof GroupError) {
    const text = `${error.message}${error.reason ? ` (${error.reason})` : ''}`;
    const hint = GROUP_HINTS[error.code] ?? 'See: wmp group --help';
    const details = { group_code: error.code, ...(error.reason ? { reason: error.reason } : {}) };
    return GROUP_NOT_FOUND.has(error.code) ? new NotFoundError(text, hint, details) : new CliError(text, hint, details);
  }
  if (error instanceof IdentityError) {
    return new CliError(
      'the identity in the home is damaged',
      'Import a backup (wmp keys import <file> --force) or make a new one (wmp keys new --force).',
    );
  }
  if (error instanceof ClientStoreError) {
    return new CliError(
      `the home's store refused a write (${error.code})`,
      'Check the --home directory and its permissions.',
    );
  }
  const tls = tlsFailureOf(error);
  if (tls) return tlsCliError(tls, undefined);
  if (isUnreachable(error)) {
    const code = unreachableCodeOf(error);
    return new UnreachableError(`relay unreachable (${code})`, UNREACHABLE_HINT, { cause: code });
  }
  if (error instanceof WmpError) {
    const data = error.data as { reason?: unknown } | undefined;
    const reason = typeof data?.reason === 'string' && data.reason.length <= 80 ? data.reason : undefined;
    const text = `the relay answered ${error.message} (${error.code}${reason ? `: ${reason}` : ''})`;
    const hint = WMP_HINTS[error.code] ?? 'See the relay documentation for this error code.';
    const details = { wmp_code: error.code, ...(reason ? { reason } : {}) };
    const notFound = error.code === ErrorCode.ParticipantNotFound || reason === 'unknown_flow';
    return notFound ? new NotFoundError(text, hint, details) : new CliError(text, hint, details);
  }
  if (error instanceof WmpClientError) {
    const text = `${error.message} (${error.code})`;
    if (error.code === 'ERR_CLIENT_UNKNOWN_GROUP')
      return new NotFoundError(text, 'Check the group id (wmp group --help).');
    if (error.code === 'ERR_CLIENT_URL')
      return new UsageError(text, undefined, 'Give the relay as http(s)://host[:port].');
    if (error.code === 'ERR_CLIENT_RELAY_AUTH') {
      return new CliError(
        text,
        'It is not the relay its well-known document names (relay_id), or someone is in between; check the URL.',
      );
    }
    return new CliError(text, 'Check the URL: it must be a WMP relay.');
  }
  const e = error as { name?: unknown; message?: unknown };
  const name = typeof e?.name === 'string' ? e.name : 'Error';
  const message = typeof e?.message === 'string' ? e.message : String(error);
  return new CliError(
    `unexpected ${name}: ${message}`,
    'This looks like a bug in wmp; please report it with the command you ran (without secrets).',
  );
}
