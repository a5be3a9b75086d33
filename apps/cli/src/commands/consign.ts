// Registered delivery from the command line (core §3.5, §5.4, docs/wmp-profile.md
// "Consignment"): what `wmp send` asks of the recipient's relay (--sign, --consent,
// --deliver-after, --assurance, --subject), how a received message's signature and a consented
// message's notice are shown, and `wmp accept` / `wmp reject` answering a notice.
import type { AssuranceLevel, ConsignmentMode, ConsignmentNotice, ReceivedMessage } from '@wmp/client-sdk';
import type { CommandContext, CommandSpec, OptionSpec } from '../command.js';
import { UsageError } from '../errors.js';
import { liveRelayOption, retriesOption, withClient } from '../live.js';
import { timestampOption, tsaAnchorsOption } from '../registered-session.js';
import { printable, shortDid } from './common.js';

const MODES: readonly ConsignmentMode[] = ['basic', 'consented', 'consented_signed'];
const LEVELS: readonly AssuranceLevel[] = ['low', 'substantial', 'high'];
const UNIT_MS: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** The options `wmp send` adds for registered delivery. */
export const registeredSendOptions: Readonly<Record<string, OptionSpec>> = {
  sign: { kind: 'flag', help: 'sign the message with your key (the recipient sees "signed by" you)' },
  consent: {
    kind: 'text',
    placeholder: 'mode',
    help: 'consented: the recipient gets a notice and the message once it accepts; consented_signed: once it accepts signed',
  },
  'deliver-after': {
    kind: 'text',
    placeholder: 'time',
    help: 'the relay holds the message until then: an RFC 3339 time or +<n>s|m|h|d from now',
  },
  assurance: {
    kind: 'text',
    placeholder: 'level',
    help: 'low, substantial or high: a recipient who authenticated below it never gets the content',
  },
  subject: { kind: 'text', help: 'a subject the notice of a consented message shows (the content waits)' },
  evidence: {
    kind: 'flag',
    help: "send on the home's evidence session: the relay signs a record of each step (wmp evidence); implies --sign",
  },
  timestamp: timestampOption,
  'tsa-anchors': tsaAnchorsOption,
};

function oneOf<T extends string>(value: unknown, allowed: readonly T[], what: string, command: string): T | undefined {
  if (value === undefined) return undefined;
  if (!(allowed as readonly unknown[]).includes(value)) {
    throw new UsageError(`"${printable(String(value))}" is no ${what}: ${allowed.join(', ')}`, command);
  }
  return value as T;
}

/** `--deliver-after` as a time: `+90s`, `+10m`, or an RFC 3339 time. */
export function deliverAfterOf(text: string, now: number, command: string): Date {
  const relative = /^\+(\d{1,9})([smhd])$/.exec(text);
  const ms = relative ? now + Number(relative[1]) * UNIT_MS[relative[2]!]! : Date.parse(text);
  if (!Number.isFinite(ms) || (!relative && !/^\d{4}-\d{2}-\d{2}T/.test(text))) {
    throw new UsageError(`"${printable(text)}" is no time: give +30s, +10m, or 2026-12-24T18:00:00Z`, command);
  }
  return new Date(ms);
}

/** The SDK's send options for the registered-delivery flags given. */
export function registeredOf(ctx: CommandContext) {
  const command = ctx.command.path.join(' ');
  const o = ctx.options;
  const consignmentMode = oneOf(o.consent, MODES, 'consignment mode', command);
  const recipientAssuranceLevel = oneOf(o.assurance, LEVELS, 'assurance level', command);
  const after = o['deliver-after'] as string | undefined;
  return {
    // The relay refuses an unsigned message under evidence (-31009 signature_required).
    ...(o.sign === true || o.evidence === true ? { sign: true } : {}),
    ...(o.timestamp === undefined ? {} : { timestamp: true }),
    ...(consignmentMode ? { consignmentMode } : {}),
    ...(recipientAssuranceLevel ? { recipientAssuranceLevel } : {}),
    ...(after === undefined ? {} : { deliverAfter: deliverAfterOf(after, Date.now(), command) }),
    ...(typeof o.subject === 'string' ? { subject: o.subject } : {}),
  };
}

/** What a received message's signature says, for JSON (`undefined`: it carried none). */
export function signatureValue(m: ReceivedMessage) {
  const s = m.signature;
  if (s === undefined) return undefined;
  return { signer: s.signer ?? null, valid: s.valid, ...(s.reason ? { reason: s.reason } : {}) };
}

/** What a received message's RFC 3161 token says, for JSON (`undefined`: it carried none). */
export function timestampValue(m: ReceivedMessage) {
  const t = m.timestamp;
  if (t === undefined) return undefined;
  return { valid: t.valid, time: t.time?.toISOString() ?? null, ...(t.reason ? { reason: t.reason } : {}) };
}

/**
 * ` (signed by did:key:z6Mk..., timestamped 2026-...Z)`, ` (signature did not hold: reason)`,
 * ` (timestamp not verified: no_anchors)`, or nothing when it carried neither.
 */
export function signatureText(m: ReceivedMessage): string {
  const parts: string[] = [];
  const s = m.signature;
  if (s !== undefined) {
    parts.push(
      s.valid && s.signer
        ? `signed by ${shortDid(s.signer)}`
        : `signature did not hold: ${printable(s.reason ?? 'unknown')}`,
    );
  }
  const t = m.timestamp;
  if (t !== undefined) {
    parts.push(
      t.valid && t.time
        ? `timestamped ${t.time.toISOString()}`
        : `timestamp not verified: ${printable(t.reason ?? 'unknown')}`,
    );
  }
  return parts.length === 0 ? '' : ` (${parts.join(', ')})`;
}

/** The command that accepts a notice, as the listener prints it. */
function acceptCommand(n: ConsignmentNotice): string {
  return n.mode === 'consented_signed'
    ? `wmp accept ${n.messageId} --content-hash ${n.contentHash} --sign`
    : `wmp accept ${n.messageId}`;
}

/** A notice of a consented message as printed: JSON value and human line. */
export function noticeItem(n: ConsignmentNotice) {
  const value = {
    type: 'notice',
    message_id: n.messageId,
    from: n.from,
    ...(n.senderDelegate ? { sender_delegate: n.senderDelegate } : {}),
    consignment_mode: n.mode,
    content_hash: n.contentHash,
    size: n.size ?? null,
    content_type: n.contentType ?? null,
    subject: n.subject ?? null,
    expires_at: n.expiresAt ?? null,
  };
  const subject = n.subject ? ` "${printable(n.subject)}"` : '';
  const human =
    `${shortDid(n.from)} sent you a ${n.mode} message${subject} (message ${n.messageId}); ` +
    `the relay holds it until you answer: ${acceptCommand(n)} | wmp reject ${n.messageId}`;
  return { value, human };
}

const accept: CommandSpec = {
  path: ['accept'],
  summary: 'accept a consented message the relay holds for you (it is then handed over)',
  description: [
    'wmp listen shows a notice for a message sent with --consent: who sent it, its subject and',
    'size, never its content. Accepting it has the relay hand it over (wmp listen shows it) and',
    'tells its sender "delivered". A consented_signed message needs the acceptance signed over',
    'its content hash (--content-hash from the notice, and --sign): that signature is your receipt.',
  ],
  args: [{ name: 'message-id', kind: 'text', help: 'the message id the notice named' }],
  options: {
    relay: liveRelayOption,
    'content-hash': { kind: 'text', placeholder: 'hash', help: 'the content hash the notice named' },
    sign: { kind: 'flag', help: 'sign the acceptance (consented_signed)' },
    retries: retriesOption,
  },
  examples: ['wmp accept msg-3f2a...', 'wmp accept msg-3f2a... --content-hash 9xQ2... --sign'],
  async run(ctx) {
    const id = ctx.args['message-id'] as string;
    const contentHash = ctx.options['content-hash'] as string | undefined;
    const sign = ctx.options.sign === true;
    await withClient(ctx, async (client, relay) => {
      const status = await client.accept(id, {
        ...(contentHash ? { contentHash } : {}),
        sign,
        signal: ctx.signal,
      });
      ctx.out.result({ message_id: id, relay, status: status ?? 'accepted', signed: sign }, () =>
        sign
          ? `accepted message ${id}, signed (your receipt); ${relay} hands it over: wmp listen`
          : `accepted message ${id}; ${relay} hands it over: wmp listen`,
      );
    });
  },
};

const reject: CommandSpec = {
  path: ['reject'],
  summary: 'refuse a consented message the relay holds for you (it is dropped)',
  description: ['The relay drops the message unread; its sender hears "dropped" (recipient_rejected).'],
  args: [{ name: 'message-id', kind: 'text', help: 'the message id the notice named' }],
  options: {
    relay: liveRelayOption,
    reason: { kind: 'text', help: 'why (kept with the refusal)' },
    retries: retriesOption,
  },
  examples: ['wmp reject msg-3f2a...', 'wmp reject msg-3f2a... --reason "not expected"'],
  async run(ctx) {
    const id = ctx.args['message-id'] as string;
    const reason = ctx.options.reason as string | undefined;
    await withClient(ctx, async (client, relay) => {
      await client.reject(id, { ...(reason ? { reason } : {}), signal: ctx.signal });
      ctx.out.result(
        { message_id: id, relay, status: 'rejected' },
        () => `rejected message ${id}; ${relay} dropped it`,
      );
    });
  },
};

export const consignCommands: readonly CommandSpec[] = [accept, reject];
