// wmp serve: answers the sessions other parties open to you through the relay (transport §6.2),
// as their responder: it authenticates each initiator, proves who you are, runs the approval flow
// (asking you at the terminal, or answering as --approve says) and resolves from files you name.
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { IncomingSession, PeerResolver } from '@wmp/client-sdk';
import type { CommandContext, CommandSpec } from '../command.js';
import { UnreachableError, UsageError } from '../errors.js';
import { connectLive, followState, liveRelay, liveRelayOption, retriesOption } from '../live.js';
import { consentText } from './built-in-flows.js';
import { printable, shortDid } from './common.js';

const MAX_RESOLVE_FILE = 1024 * 1024;

/** `--resolve TYPE=FILE` as resolvers: each file is JSON `{"<uri>": <metadata>, "*": <for any other>}`. */
async function resolversOf(ctx: CommandContext): Promise<Record<string, PeerResolver>> {
  const specs = (ctx.options.resolve as readonly string[] | undefined) ?? [];
  const resolvers: Record<string, PeerResolver> = {};
  for (const spec of specs) {
    const at = spec.indexOf('=');
    const type = at > 0 ? spec.slice(0, at) : '';
    if (!/^[a-z][a-z0-9_]{0,63}$/.test(type)) {
      throw new UsageError(`--resolve "${spec}": give type=file (like endpoint=./endpoint.json)`, 'serve');
    }
    const file = spec.slice(at + 1);
    let table: Record<string, unknown>;
    try {
      const text = await readFile(file, 'utf8');
      if (text.length > MAX_RESOLVE_FILE) throw new Error('too large');
      table = JSON.parse(text) as Record<string, unknown>;
      if (typeof table !== 'object' || table === null || Array.isArray(table)) throw new Error('not an object');
    } catch {
      throw new UsageError(
        `--resolve ${type}: ${file} is not a readable JSON object of URIs and their metadata (at most 1 MiB)`,
        'serve',
      );
    }
    resolvers[type] = (uri) => {
      const metadata = Object.hasOwn(table, uri) ? table[uri] : table['*'];
      return metadata === undefined ? null : { metadata };
    };
  }
  return resolvers;
}

/** Answers one yes/no question a line at a time from standard input (a terminal or a pipe). */
function questions(ctx: CommandContext): { ask(question: string): Promise<boolean>; close(): void } {
  const rl = createInterface({ input: ctx.stdin, terminal: false });
  const lines: string[] = [];
  const waiting: Array<(line: string | undefined) => void> = [];
  let ended = false;
  rl.on('line', (line) => {
    const next = waiting.shift();
    if (next) next(line);
    else lines.push(line);
  });
  rl.on('close', () => {
    ended = true;
    for (const w of waiting.splice(0)) w(undefined);
  });
  return {
    async ask(question) {
      ctx.out.note(`${question} [y/N]`);
      const line = lines.shift() ?? (ended ? undefined : await new Promise<string | undefined>((r) => waiting.push(r)));
      return /^\s*y(es)?\s*$/i.test(line ?? '');
    },
    close: () => rl.close(),
  };
}

const serve: CommandSpec = {
  path: ['serve'],
  summary: 'answer the sessions others open to you through the relay (flows, resolve, messages)',
  description: [
    'Connects to the relay (--relay, default the first on your card) and answers every session',
    'another party opens to you with wmp connect <your id> (or the SDK): it authenticates them,',
    'proves who you are, shows their messages, answers the approval and sign flows and resolves',
    'URIs. --approve / --sign ask (default) ask you at the terminal (or read y/n lines from',
    'standard input); yes or no answer every request so (a signature is made with your key).',
    'Resolve: --resolve TYPE=FILE, FILE a JSON object',
    'of URIs and their metadata ("*" for any other URI). Runs until Ctrl-C, or --count sessions ended.',
  ],
  options: {
    relay: liveRelayOption,
    approve: { kind: 'name', help: 'how approval requests are answered: ask, yes or no', default: 'ask' },
    sign: { kind: 'name', help: 'how requests to sign are answered: ask, yes or no', default: 'ask' },
    resolve: { kind: 'text', multiple: true, placeholder: 'type=file', help: 'a resolver: its type and its JSON file' },
    count: { kind: 'int', min: 1, max: 1_000_000, help: 'stop after this many sessions have ended' },
    retries: retriesOption,
  },
  examples: [
    'wmp serve',
    'wmp serve --approve yes --resolve endpoint=./endpoint.json',
    'printf "y\\n" | wmp serve --count 1',
  ],
  async run(ctx) {
    const modeOf = (name: 'approve' | 'sign') => {
      const mode = (ctx.options[name] as string | undefined) ?? 'ask';
      if (!['ask', 'yes', 'no'].includes(mode)) throw new UsageError(`--${name} ${mode}: give ask, yes or no`, 'serve');
      return mode;
    };
    const modes = { approve: modeOf('approve'), sign: modeOf('sign') };
    const resolvers = await resolversOf(ctx);
    const relay = await liveRelay(ctx);
    const client = await connectLive(ctx, relay);
    const asking = modes.approve === 'ask' || modes.sign === 'ask' ? questions(ctx) : undefined;
    const limit = ctx.options.count as number | undefined;
    let ended = 0;
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    const onAbort = () => finish();
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    const closed = followState(ctx, client, relay);
    // You decide (at the terminal, or as --approve / --sign say); the SDK completes the flow.
    const decide = async (kind: 'approve' | 'sign', what: unknown, from: string | undefined) => {
      const yes =
        modes[kind] === 'ask' && asking ? await asking.ask(consentText(kind, what, from)) : modes[kind] === 'yes';
      ctx.out.item({ type: kind === 'approve' ? 'approval' : 'signature', request: what, consented: yes }, () =>
        kind === 'approve' ? `  ${yes ? 'approved' : 'rejected'}` : `  ${yes ? 'signed' : 'declined'}`,
      );
      return yes;
    };
    const watch = (session: IncomingSession) => {
      ctx.out.item(
        { type: 'session', session_id: session.id, from: session.initiator },
        () => `session ${session.id} from ${session.initiator}`,
      );
      session.on('message', (m) => {
        ctx.out.item(
          { type: 'message', session_id: session.id, from: m.from ?? null, body: m.body },
          () => `${shortDid(m.from ?? session.initiator)}: ${printable(JSON.stringify(m.body))}`,
        );
      });
      session.on('closed', ({ by }) => {
        ctx.out.item(
          { type: 'session_closed', session_id: session.id, by },
          () => `session ${session.id} ended (${by === 'peer' ? 'by them' : 'by us'})`,
        );
        ended += 1;
        if (limit !== undefined && ended >= limit) finish();
      });
    };
    const stopServing = await client.onSession(watch, {
      consent: {
        approval: async (review) => ({ approved: await decide('approve', review.request, review.initiator) }),
        sign: (consent) => decide('sign', consent.request, consent.initiator),
      },
      resolvers,
    });
    try {
      ctx.out.note(`answering sessions to ${client.id} on ${relay} (Ctrl-C to stop)`);
      const lost = await Promise.race([finished.then(() => undefined), closed.then((e) => e ?? new Error('closed'))]);
      if (lost !== undefined) {
        throw new UnreachableError(
          `lost the connection to ${relay} and could not reconnect`,
          'Check that the relay is running, then serve again.',
        );
      }
    } finally {
      ctx.signal.removeEventListener('abort', onAbort);
      asking?.close();
      await stopServing().catch(() => undefined);
      await client.close();
    }
  },
};

export const serveCommands: readonly CommandSpec[] = [serve];
