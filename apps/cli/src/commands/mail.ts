// wmp mail send|fetch|watch: sealed offline mail (OHAN). A message is sealed to the recipient's
// card, stamped with proof of work when the box asks strangers for it, and published to every
// relay on their card; you fetch (or watch) your own from every relay on yours.
import type { MailMessage } from '@wmp/client-sdk';
import type { CommandContext, CommandSpec, GroupSpec } from '../command.js';
import type { Progress } from '../progress.js';
import { toCliError } from '../to-cli-error.js';
import {
  boxRelayOption,
  findCard,
  mailItem,
  openMailbox,
  outcomeError,
  relaysOf,
  requireText,
  settle,
  shortDid,
  textEnvelope,
} from './common.js';

/** Stamp mining progress: shown from the first report (every 65 536 tries), erased at the end. */
function stampProgress(ctx: CommandContext) {
  let progress: Progress | undefined;
  return {
    onProgress({ tries, expectedTries }: { tries: number; expectedTries: number }) {
      progress ??= ctx.out.progress('mining a proof-of-work stamp');
      const pct = Math.min(999, Math.round((100 * tries) / expectedTries));
      progress.update(`(${tries.toLocaleString('en')} tries, ${pct}% of the expected work)`);
    },
    done() {
      progress?.done();
    },
  };
}

const send: CommandSpec = {
  path: ['mail', 'send'],
  summary: 'seal a message to someone and leave it in their boxes',
  description: [
    "The recipient's card comes from the home (looked up or imported before), else from the",
    'directories of --relay or of the relays on your card. The message is published to every',
    'relay on their card. Strangers pay a proof-of-work stamp of the strength each box asks for',
    '(a progress line shows on a terminal); with --contact (you are on their allow list) no stamp',
    'is mined unless a box refuses without one.',
  ],
  args: [
    { name: 'did', kind: 'did', help: 'recipient (did:key:z6Mk... or z6Mk...)' },
    { name: 'text', rest: true, help: 'the message (the rest of the line)' },
  ],
  options: {
    relay: { ...boxRelayOption, help: "look the recipient's card up at this relay directory" },
    contact: { kind: 'flag', help: 'you are on their allow list: skip the stamp where the box allows' },
    ttl: {
      kind: 'int',
      help: 'seconds the message waits for them',
      default: '604800, 7 days (lowered to what the boxes allow)',
      min: 60,
      max: 30 * 24 * 3600,
    },
  },
  examples: [
    'wmp mail send did:key:z6Mk... see you tomorrow',
    'wmp mail send did:key:z6Mk... "hello bob" --relay http://127.0.0.1:8080',
    'wmp mail send did:key:z6Mk... hi --contact --ttl 86400',
  ],
  async run(ctx) {
    const to = ctx.args.did as string;
    const text = requireText(ctx.args.text as string);
    const mailbox = await openMailbox(ctx);
    const card = await findCard(ctx, mailbox, to);
    const progress = stampProgress(ctx);
    let result: Awaited<ReturnType<typeof mailbox.send>>;
    try {
      result = await mailbox.send(card, textEnvelope(mailbox.identity.did, to, text), {
        asContact: ctx.options.contact === true,
        ...(ctx.options.ttl === undefined ? {} : { ttlSeconds: ctx.options.ttl as number }),
        signal: ctx.signal,
        onProgress: progress.onProgress,
      });
    } finally {
      progress.done();
    }
    settle(ctx, result.outcomes);
    const rows = result.outcomes.map((o) =>
      o.ok
        ? { relay: o.relay, ok: true, status: o.status, event_id: o.eventId, stamp_bits: o.stampBits }
        : { relay: o.relay, ok: false, error: outcomeError(o.error) },
    );
    const stored = rows.filter((r) => r.ok);
    ctx.out.result({ to, accepted: result.accepted, relays: rows }, () => [
      `sealed mail to ${shortDid(to)} left at ${stored.length} of ${rows.length} relay${rows.length === 1 ? '' : 's'}`,
      ...rows.map((r) =>
        r.ok
          ? `  ${r.relay}  ${r.status === 'stored' ? 'stored' : 'already there'} (event ${r.event_id?.slice(0, 12)}..., stamp ${r.stamp_bits} bits)`
          : `  ${r.relay}  failed: ${r.error?.message}`,
      ),
    ]);
  },
};

const fetch: CommandSpec = {
  path: ['mail', 'fetch'],
  summary: 'take your new sealed mail from every relay on your card',
  description: [
    'Each message is verified, opened, shown once (deduplicated across relays and runs) and then',
    'acknowledged, so the box deletes it. With --json the output is one object:',
    '{"messages": [...], "rejected": [...], "errors": [...], "more": false}.',
  ],
  options: { relay: { ...boxRelayOption, help: 'fetch from this relay instead of those on your card' } },
  examples: ['wmp mail fetch', 'wmp --json mail fetch'],
  async run(ctx) {
    const mailbox = await openMailbox(ctx, relaysOf(ctx));
    const items: ReturnType<typeof mailItem>[] = [];
    const result = await mailbox.fetch({
      signal: ctx.signal,
      onMessage: (message: MailMessage) => {
        const item = mailItem(message);
        items.push(item);
        // People see each message as it is taken; --json prints them all at the end.
        if (!ctx.out.json) ctx.out.item(item.value, () => item.human);
      },
    });
    const relays = await mailbox.relays();
    if (result.errors.length > 0 && result.errors.length >= relays.length && result.messages.length === 0) {
      settle(
        ctx,
        result.errors.map((error) => ({ relay: error.relay ?? '', ok: false, error })),
      );
    }
    for (const e of result.errors) ctx.out.warn(outcomeError(e).message, e.code);
    for (const r of result.rejected) ctx.out.warn(`refused an event from ${r.relay} (${r.reason})`, 'rejected_event');
    if (ctx.out.json) {
      ctx.out.result(
        {
          messages: items.map((i) => i.value),
          rejected: result.rejected.map((r) => ({ relay: r.relay, event_id: r.eventId, reason: r.reason })),
          errors: result.errors.map((e) => ({ relay: e.relay, ...outcomeError(e) })),
          more: result.more,
        },
        () => '',
      );
    } else {
      ctx.out.note(
        `${items.length === 0 ? 'no new mail' : `${items.length} new message${items.length === 1 ? '' : 's'}`}` +
          `${result.more ? ' (more waiting: run wmp mail fetch again)' : ''}`,
      );
    }
  },
};

const watch: CommandSpec = {
  path: ['mail', 'watch'],
  summary: 'wait for sealed mail and show it as it arrives',
  description: [
    'Keeps an event stream open to every relay on your card (reconnecting when one drops) and',
    'shows each new message once, acknowledging it. Runs until Ctrl-C, or until --count messages.',
    'With --json: one JSON object per message, per line.',
  ],
  options: {
    relay: { ...boxRelayOption, help: 'watch this relay instead of those on your card' },
    count: { kind: 'int', min: 1, max: 1_000_000, help: 'stop after this many messages' },
  },
  examples: ['wmp mail watch', 'wmp --json mail watch --count 1'],
  async run(ctx) {
    const mailbox = await openMailbox(ctx, relaysOf(ctx));
    const relays = await mailbox.relays();
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    const limit = ctx.options.count as number | undefined;
    let seen = 0;
    const reported = new Set<string>();
    try {
      const watching = await mailbox.watch({
        signal: stop.signal,
        onMessage: (message) => {
          if (limit !== undefined && seen >= limit) throw new Error('count reached');
          const item = mailItem(message);
          ctx.out.item(item.value, () => item.human);
          seen += 1;
          if (limit !== undefined && seen >= limit) stop.abort();
        },
        onRejected: (r) => ctx.out.warn(`refused an event from ${r.relay} (${r.reason})`, 'rejected_event'),
        onError: (error) => {
          // One warning per relay and kind of failure, not one per reconnection attempt.
          const e = error as { code?: string; relay?: string };
          const key = `${e.relay}:${e.code}`;
          if (reported.has(key)) return;
          reported.add(key);
          ctx.out.warn(`${outcomeErrorText(error)} (retrying)`, e.code ?? 'error');
        },
      });
      ctx.out.note(`watching ${relays.join(', ')} for mail (Ctrl-C to stop)`);
      await watching.closed;
    } finally {
      ctx.signal.removeEventListener('abort', onAbort);
    }
  },
};

function outcomeErrorText(error: unknown): string {
  return toCliError(error).message;
}

export const mailCommands: GroupSpec = {
  name: 'mail',
  summary: 'sealed offline mail through relay boxes (OHAN)',
  commands: [send, fetch, watch],
};
