// What several commands share: option specs, opening the mailbox of the home's identity, finding
// a recipient's card, and turning received messages into printable values.
import type { Card, MailboxError, MailMessage, WmpClient } from '@wmp/client-sdk';
import { Mailbox } from '@wmp/client-sdk/node';
import { randomBytes, toHex } from '@wmp/jcs-signing';
import type { CommandContext, OptionSpec } from '../command.js';
import { CliError, NotFoundError } from '../errors.js';
import { loadContactCard, saveContactCard } from '../state.js';
import { tlsOptions } from '../tls.js';
import { mailboxCliError } from '../to-cli-error.js';

export const WMP_VERSION = '0.1';

/** `--relay <url>` for commands that talk to a relay's box (repeatable). */
export const boxRelayOption: OptionSpec = {
  kind: 'url',
  multiple: true,
  help: 'relay (box) to use instead of the relays on your card',
};

/** The home's identity with its mailbox (cursors, dedupe and card in the home's store). */
export async function openMailbox(ctx: CommandContext, relays?: readonly string[]): Promise<Mailbox> {
  const identity = await ctx.home.identity();
  return new Mailbox({
    identity,
    store: ctx.home.store(),
    tls: await tlsOptions(ctx, identity),
    ...(relays && relays.length > 0 ? { relays } : {}),
  });
}

export function relaysOf(ctx: CommandContext): string[] | undefined {
  const r = ctx.options.relay;
  return Array.isArray(r) && r.length > 0 ? [...r] : undefined;
}

export function signingKeyOfDid(did: string): string {
  return did.slice('did:key:'.length);
}

export function didOfKey(key: string): string {
  return `did:key:${key}`;
}

/**
 * The card of `did`: looked up at the `--relay` directories when given, else the stored contact
 * card, else looked up at the relays on your own card. Every card found is stored as a contact.
 */
export async function findCard(ctx: CommandContext, mailbox: Mailbox, did: string, fresh = false): Promise<Card> {
  const key = signingKeyOfDid(did);
  const given = relaysOf(ctx);
  if (!given && !fresh) {
    const stored = await loadContactCard(ctx.home, key);
    if (stored) return stored;
  }
  let relays = given;
  if (!relays) {
    const own = await mailbox.card();
    relays = own ? [...own.relays] : [];
  }
  if (relays.length === 0) {
    throw new NotFoundError(
      `no card for ${did} in ${ctx.home.dir}, and no relay to look it up`,
      'Give a directory relay that has their card (--relay <url>), or import their card: wmp card import <file>',
    );
  }
  for (const relay of relays) {
    // `undefined`: no such card, or a relay-only box (no directory): the box answers the same.
    const card = await mailbox.lookupCard(key, relay, { signal: ctx.signal });
    if (card) {
      await saveContactCard(ctx.home, card);
      return card;
    }
  }
  throw new NotFoundError(
    `no card for ${did} at ${relays.join(', ')}`,
    'Ask them to publish it there (wmp card publish --relay <url>); a relay-only relay keeps no cards: ' +
      'import theirs instead (wmp card import <file>)',
  );
}

/** A WMP text message as one JSON-RPC notification (sealed as it is for mail). */
export function textEnvelope(from: string, to: string, text: string): Record<string, unknown> {
  return {
    jsonrpc: '2.0',
    method: 'wmp.message.deliver',
    params: {
      wmp: { version: WMP_VERSION, sender: from, message_id: `msg-${toHex(randomBytes(16))}` },
      to: [to],
      content_type: 'application/json',
      body: { text },
    },
  };
}

/** The text of a body: `{text}` (what wmp sends), a string, or else its JSON. */
export function bodyText(body: unknown): string {
  if (typeof body === 'string') return body;
  if (body !== null && typeof body === 'object' && typeof (body as { text?: unknown }).text === 'string') {
    return (body as { text: string }).text;
  }
  return JSON.stringify(body) ?? '';
}

/** Control characters are shown escaped: a message never moves the cursor or rings the bell. */
export function printable(text: string): string {
  let out = '';
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    // C0 controls except tab and newline, DEL, and C1 controls (ESC sequences start there).
    const control = (code < 0x20 && code !== 0x09 && code !== 0x0a) || (code >= 0x7f && code <= 0x9f);
    out += control ? `\\u${code.toString(16).padStart(4, '0')}` : ch;
  }
  return out;
}

/** `did:key:z6MkhaXg...2doK` */
export function shortDid(did: string): string {
  return did.length > 30 ? `${did.slice(0, 18)}...${did.slice(-4)}` : did;
}

/** A received sealed message as printed: JSON value and human line. */
export function mailItem(message: MailMessage) {
  const params = ('params' in message.envelope ? message.envelope.params : undefined) as
    | Record<string, unknown>
    | undefined;
  const body = params?.body;
  const value = {
    type: 'mail',
    from: message.from,
    event_id: message.eventId,
    relay: message.relay,
    ts: message.ts,
    method: 'method' in message.envelope ? message.envelope.method : undefined,
    content_type: params?.content_type,
    body,
  };
  const human = `[${message.ts}] ${shortDid(message.from)}: ${printable(bodyText(body)).replace(/\n/g, '\n  ')}`;
  return { value, human };
}

/** One relay's failure, for JSON output. */
export function outcomeError(error: MailboxError): { code: string; message: string } {
  const e = mailboxCliError(error);
  return { code: error.code, message: e.message };
}

/** Throws the first failure when nothing succeeded; warns about each failure otherwise. */
export function settle(
  ctx: CommandContext,
  outcomes: readonly { relay: string; ok: boolean; error?: MailboxError }[],
): void {
  const failures = outcomes.filter((o) => !o.ok && o.error);
  if (failures.length === 0) return;
  if (failures.length === outcomes.length) throw mailboxCliError(failures[0]!.error!);
  for (const f of failures) ctx.out.warn(mailboxCliError(f.error!).message, f.error!.code);
}

export function requireText(text: string): string {
  if (text.trim() === '') throw new CliError('the message is empty', 'Give some text to send.');
  return text;
}

/** Who the relay proved to be when the session was opened (mutual authentication), in words. */
export function relayProofText(client: Pick<WmpClient, 'relayId'>): string {
  return client.relayId
    ? `the relay proved to be ${client.relayId}`
    : 'the relay did not prove who it is (its well-known document names no relay_id)';
}
