// wmp send|listen: live WMP messages through a relay (the relay queues a message for a recipient
// who is not connected and hands it over when they are).
import type { FlowEvent, Group, MessageStatusEvent, ReceivedMessage, WmpClient } from '@wmp/client-sdk';
import type { CommandContext, CommandSpec } from '../command.js';
import { CliError, InterruptedError, UnreachableError } from '../errors.js';
import { connectLive, followState, liveRelay, liveRelayOption, retriesOption, withClient } from '../live.js';
import { noEvidenceError, sessionChoice, tsaAnchorsOption, underEvidence } from '../registered-session.js';
import { recordSent, recordStatus } from '../sent-messages.js';
import { bodyText, printable, relayProofText, requireText, shortDid } from './common.js';
import {
  noticeItem,
  registeredOf,
  registeredSendOptions,
  signatureText,
  signatureValue,
  timestampValue,
} from './consign.js';
import { evidenceItem } from './evidence.js';
import { groupNames, restoreGroups } from './group.js';
import { followStatuses } from './message-status.js';

/** A received live message as printed: JSON value and human line (`names`: group id -> name). */
export function messageItem(m: ReceivedMessage, names: ReadonlyMap<string, string> = new Map()) {
  const value = {
    type: 'message',
    id: m.id,
    from: m.from,
    to: m.to,
    group: m.group,
    ...(m.group && names.has(m.group) ? { group_name: names.get(m.group) } : {}),
    content_type: m.contentType,
    body: m.body,
    ...(m.signature ? { signature: signatureValue(m) } : {}),
    ...(m.timestamp ? { timestamp: timestampValue(m) } : {}),
    received_at: new Date().toISOString(),
  };
  const where = m.group ? `[${names.get(m.group) ?? m.group}] ` : '';
  const human = `${where}${m.from ? shortDid(m.from) : '(unknown sender)'}: ${printable(bodyText(m.body)).replace(/\n/g, '\n  ')}${signatureText(m)}`;
  return { value, human };
}

/** A flow event (progress, completion, failure) as printed. */
export function flowItem(f: FlowEvent) {
  const value = {
    type: 'flow',
    flow_id: f.flowId,
    session_id: f.sessionId,
    kind: f.kind,
    ...(f.step !== undefined ? { step: f.step } : {}),
    ...(f.payload ? { payload: f.payload } : {}),
    ...(f.result ? { result: f.result } : {}),
    ...(f.error ? { error: { code: f.error.code, message: f.error.message, data: f.error.data } } : {}),
  };
  const detail =
    f.kind === 'progress'
      ? `step ${f.step}`
      : f.kind === 'completed'
        ? `completed ${JSON.stringify(f.result ?? {})}`
        : `failed: ${f.error?.message ?? ''} ${JSON.stringify(f.error?.data ?? {})}`;
  return { value, human: `flow ${f.flowId} ${printable(detail)}` };
}

const TERMINAL: ReadonlySet<string> = new Set(['delivered', 'expired', 'dropped']);
const ANY_STATUS: ReadonlySet<string> = new Set(['queued', ...TERMINAL]);

/**
 * Without --wait, how long `send` waits for the relay's first status about the message (it comes
 * at once: `queued` for a recipient away, `delivered`, or `dropped` with its reason), so that
 * a message the relay refuses right after taking it is not reported as queued.
 */
const FIRST_STATUS_MS = 5000;

/** Whether the relay agreed to send statuses on this session (`offline.status_notifications`). */
function statusesNegotiated(client: WmpClient): boolean {
  const offline = client.capabilities.offline as { status_notifications?: unknown } | undefined;
  return offline !== undefined && offline.status_notifications !== false;
}

/**
 * Statuses `client` receives from now on: each recorded in the home (a kept one is acknowledged
 * after that), and waited for by message id.
 */
function watchStatuses(ctx: CommandContext, client: WmpClient) {
  const seen: MessageStatusEvent[] = [];
  let wake: (() => void) | undefined;
  const off = client.on('status', async (s) => {
    seen.push(s);
    if (seen.length > 1000) seen.shift();
    wake?.();
    await recordStatus(ctx.home, s);
  });
  return {
    off,
    /** The first status of `id` among `wanted`, waiting up to `timeoutMs` (undefined: none came). */
    async first(id: string, wanted: ReadonlySet<string>, timeoutMs: number): Promise<MessageStatusEvent | undefined> {
      const find = () => seen.find((s) => s.messageId === id && wanted.has(s.status));
      await waitUntil(
        () => find() !== undefined,
        (check) => {
          wake = check;
          return () => {
            wake = undefined;
          };
        },
        timeoutMs,
        ctx.signal,
      );
      return find();
    },
  };
}

/** Resolves when `ready()` holds (checked now and on each wake-up), after `timeoutMs`, or on abort. */
function waitUntil(
  ready: () => boolean,
  subscribe: (wake: () => void) => () => void,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<void> {
  return new Promise((resolve) => {
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', finish);
      unsubscribe();
      resolve();
    };
    const timer = setTimeout(finish, timeoutMs);
    signal.addEventListener('abort', finish, { once: true });
    const unsubscribe = subscribe(() => {
      if (ready()) finish();
    });
    if (ready() || signal.aborted) finish();
  });
}

/** A message the relay will not deliver: what it said, as it said it (never a guess). */
function undelivered(got: MessageStatusEvent, relay: string): CliError {
  const reason = got.reason ? ` (${printable(got.reason.slice(0, 200))})` : ' (the relay gave no reason)';
  return new CliError(
    `the message ${got.messageId} was ${got.status} by ${relay}${reason}`,
    got.status === 'expired'
      ? 'It waited too long for the recipient; send it again (or send sealed mail: wmp mail send).'
      : 'The relay will not deliver it; the reason above says why. Sealed mail takes another way: wmp mail send',
    { message_id: got.messageId, status: got.status, ...(got.reason ? { reason: got.reason } : {}) },
  );
}

const send: CommandSpec = {
  path: ['send'],
  summary: 'send a live message through a relay',
  description: [
    'The relay stores the message and hands it to the recipient at once if they are connected,',
    "else when they connect (for 24 hours by default). wmp waits for the relay's first status",
    '(up to 5 s): "delivered", "queued" (kept until they connect), or "dropped" with the reason',
    'the relay gave (exit 1). With --wait, wmp waits for the recipient to take it ("delivered");',
    'a message still undelivered after --timeout is exit 1. What wmp learns is kept in the home:',
    'wmp status <message-id> says what became of it later.',
    'Registered delivery: --sign signs it with your key; --consent consented has the recipient',
    'accept it first (wmp accept), consented_signed accept it signed; --deliver-after has the',
    'relay hold it until then; --assurance refuses a recipient who authenticated below the level;',
    '--timestamp <tsa-url> (with --tsa-anchors) adds an RFC 3161 token over the message; --evidence',
    "sends it on the home's evidence session: the relay keeps a signed record of each step",
    '(wmp evidence <message-id>; wmp listen --evidence shows them as they come).',
  ],
  args: [
    {
      name: 'did',
      kind: 'recipient',
      help: 'recipient (did:key:z6Mk..., z6Mk..., did:jwk:..., did:web:... or x509:san:dns:...)',
    },
    { name: 'text', rest: true, help: 'the message (the rest of the line)' },
  ],
  options: {
    relay: liveRelayOption,
    wait: { kind: 'flag', help: 'wait until the recipient has the message' },
    timeout: { kind: 'int', min: 1, max: 3600, default: '30', help: 'seconds --wait waits' },
    retries: retriesOption,
    ...registeredSendOptions,
  },
  examples: [
    'wmp send did:key:z6Mk... hello there --relay http://127.0.0.1:8080',
    'wmp send did:key:z6Mk... the terms --sign --consent consented_signed --subject contract',
    'wmp send did:key:z6Mk... the terms --evidence --timestamp https://tsa.example --tsa-anchors tsa-roots.pem',
    'wmp send did:key:z6Mk... happy new year --deliver-after 2027-01-01T00:00:00Z',
    'wmp send did:key:z6Mk... "are you there?" --wait --timeout 10',
    'wmp send did:web:example.com:users:bob hello',
  ],
  async run(ctx) {
    const to = ctx.args.did as string;
    const text = requireText(ctx.args.text as string);
    const wait = ctx.options.wait === true;
    const timeoutS = (ctx.options.timeout as number | undefined) ?? 30;
    const registered = registeredOf(ctx);
    const session = await sessionChoice(ctx, ctx.options.evidence === true);
    await withClient(
      ctx,
      async (client, relay) => {
        // A relay that offers no evidence negotiates none: such a message would go unrecorded.
        if (ctx.options.evidence === true && !underEvidence(client)) throw noEvidenceError(relay);
        // Statuses can come before the send's own answer: listen first, match by id after.
        const statuses = watchStatuses(ctx, client);
        try {
          const sent = await client.send(to, { text }, { ...registered, signal: ctx.signal });
          const id = sent.messageId;
          if (id !== undefined) await recordSent(ctx.home, { messageId: id, to, relay, status: sent.status });
          let got: MessageStatusEvent | undefined;
          // A message held (scheduled, or waiting for consent) has no status to come soon: only --wait waits.
          const held = registered.deliverAfter !== undefined || (registered.consignmentMode ?? 'basic') !== 'basic';
          if (id !== undefined && (wait || (!held && statusesNegotiated(client)))) {
            got = await statuses.first(id, wait ? TERMINAL : ANY_STATUS, wait ? timeoutS * 1000 : FIRST_STATUS_MS);
          }
          if (!got && ctx.signal.aborted) throw new InterruptedError();
          if (wait && !got) {
            throw new CliError(
              `the message ${id} is queued at ${relay} but not delivered within ${timeoutS} s`,
              'The relay keeps it until the recipient connects (wmp listen) or it expires; ' +
                `later: wmp status ${id}. Or send sealed mail: wmp mail send`,
              { message_id: id, status: 'queued' },
            );
          }
          if (got && (got.status === 'dropped' || got.status === 'expired')) throw undelivered(got, relay);
          const status: string = got?.status ?? sent.status ?? 'queued';
          // Who answered: the relay's proof of its relay_id (mutual authentication), on stderr.
          if (!ctx.live) ctx.out.note(`wmp: ${relayProofText(client)}`);
          ctx.out.result({ to, relay, relay_id: client.relayId ?? null, message_id: id, status }, () =>
            status === 'delivered'
              ? `delivered to ${shortDid(to)} (message ${id})`
              : status === 'accepted'
                ? `accepted by ${relay} for ${shortDid(to)} (message ${id}); they are online, it is on its way`
                : `queued at ${relay} for ${shortDid(to)} (message ${id}); the relay hands it over when they connect`,
          );
        } finally {
          statuses.off();
        }
      },
      session,
    );
  },
};

const listen: CommandSpec = {
  path: ['listen'],
  summary: 'connect to a relay and show the messages you receive',
  description: [
    'Shows each message once, then acknowledges it (the relay deletes it); messages queued while',
    'you were away come first. Statuses of the messages you sent (delivered, dropped, ...) that',
    'the relay kept for you are shown, recorded for wmp status and acknowledged too (--count counts',
    'messages only). Runs until Ctrl-C, or until --count messages. A dropped connection is retried',
    '(shown on stderr); with --json each message or status is one JSON object per line.',
    "With --evidence, listens on the home's evidence session (the one wmp send --evidence uses):",
    'the evidence records the relay sends about your messages are shown too, then acknowledged',
    '(not counted; wmp evidence <message-id> reads them all later). Group messages come on the',
    'plain session only. --tsa-anchors checks the RFC 3161 tokens of messages and records.',
  ],
  options: {
    relay: liveRelayOption,
    count: { kind: 'int', min: 1, max: 1_000_000, help: 'stop after this many messages' },
    evidence: {
      kind: 'flag',
      help: "listen on the home's evidence session: show the evidence records of what you sent",
    },
    'tsa-anchors': tsaAnchorsOption,
    retries: retriesOption,
  },
  examples: [
    'wmp listen --relay http://127.0.0.1:8080',
    'wmp --json listen --count 1',
    'wmp listen --evidence --tsa-anchors tsa-roots.pem',
  ],
  async run(ctx) {
    const relay = await liveRelay(ctx);
    const evidence = ctx.options.evidence === true;
    const session = await sessionChoice(ctx, evidence);
    let groups: Group[] = [];
    const client = await connectLive(ctx, relay, {
      receive: true,
      // Group sessions are kept with the plain session: the evidence session holds none.
      prepare: async (c) => {
        if (!evidence) groups = await restoreGroups(ctx, c);
      },
      ...(session ? { session } : {}),
    });
    const names = await groupNames(ctx.home);
    const limit = ctx.options.count as number | undefined;
    let seen = 0;
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    const onAbort = () => finish();
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    const closed = followState(ctx, client, relay);
    try {
      client.on('flow', (f) => {
        const item = flowItem(f);
        ctx.out.item(item.value, () => item.human);
      });
      for (const g of groups) watchGroup(ctx, g, names);
      // Statuses of messages you sent, kept by the relay while you were away: shown, recorded,
      // acknowledged (they are not messages: --count does not count them).
      followStatuses(ctx, client, ctx.out);
      // Consented messages wait at the relay: their notices say how to answer (not counted either).
      client.on('notice', (n) => {
        const item = noticeItem(n);
        ctx.out.item(item.value, () => item.human);
      });
      // Evidence records of messages you sent under evidence (not counted either); the SDK
      // acknowledges each once the listener returned.
      client.onEvidence((e) => {
        const item = evidenceItem(e);
        ctx.out.item(
          { type: 'evidence', message_id: e.messageId ?? null, ...item.value },
          () => `evidence ${printable(e.messageId ?? '?')} ${item.human}`,
        );
      });
      client.on('message', (m) => {
        if (limit !== undefined && seen >= limit) return;
        const item = messageItem(m, names);
        ctx.out.item(item.value, () => item.human);
        seen += 1;
        if (limit !== undefined && seen >= limit) finish();
      });
      ctx.out.note(`listening as ${client.did} on ${relay} (Ctrl-C to stop)`);
      const lost = await Promise.race([finished.then(() => undefined), closed.then((e) => e ?? new Error('closed'))]);
      if (lost !== undefined) {
        throw new UnreachableError(
          `lost the connection to ${relay} and could not reconnect`,
          'Check that the relay is running, then listen again.',
        );
      }
    } finally {
      ctx.signal.removeEventListener('abort', onAbort);
      for (const g of groups) await g.close().catch(() => undefined);
      await client.close();
    }
  },
};

/** Prints what happens to a group a live command holds: members added or removed, our removal. */
export function watchGroup(ctx: Pick<CommandContext, 'out'>, group: Group, names: ReadonlyMap<string, string>): void {
  const label = names.get(group.id) ?? group.id;
  group.on('commit', (c) => {
    const changes = [...c.added.map((d) => `+${shortDid(d)}`), ...c.removed.map((d) => `-${shortDid(d)}`)];
    ctx.out.item(
      {
        type: 'group_commit',
        group: group.id,
        name: names.get(group.id) ?? null,
        epoch: c.epoch,
        sender: c.sender,
        added: c.added,
        removed: c.removed,
      },
      () => `[${label}] epoch ${c.epoch}${changes.length ? ` ${changes.join(' ')}` : ''}`,
    );
  });
  group.on('removed', (r) => {
    ctx.out.item(
      { type: 'group_removed', group: group.id, name: names.get(group.id) ?? null, epoch: r.epoch, by: r.by },
      () => `[${label}] you were removed${r.by ? ` by ${shortDid(r.by)}` : ''}`,
    );
  });
  group.on('error', (e) => ctx.out.warn(`[${label}] ${e.error.message}`, e.error.code));
}

export const liveCommands: readonly CommandSpec[] = [send, listen];
