// wmp connect: an interactive session on one relay. Incoming messages appear above the prompt
// while you type; lines are commands from the REPL's own table (help lists it), run with the
// session's connection; history is kept in the home.
import type { Group } from '@wmp/client-sdk';
import type { CommandContext, CommandSpec, CommandTable, GroupSpec } from '../command.js';
import { buildTable } from '../command.js';
import { UnreachableError, UsageError } from '../errors.js';
import { commandHelp, commandRows } from '../help.js';
import { connectLive, followState, liveRelay, retriesOption } from '../live.js';
import { Output } from '../output.js';
import { parseCommandLine } from '../parse.js';
import { Repl } from '../repl/repl.js';
import { splitWords } from '../repl/words.js';
import type { TextSink } from '../text-sink.js';
import { toCliError } from '../to-cli-error.js';
import { VERSION } from '../version.js';
import { allowCommands } from './allow.js';
import { cardCommands } from './card.js';
import { relayProofText, requireText } from './common.js';
import { flowCommands } from './flow.js';
import { groupCommands, groupNames, restoreGroups } from './group.js';
import { keysCommands } from './keys.js';
import { flowItem, liveCommands, messageItem, watchGroup } from './live.js';
import { mailCommands } from './mail.js';
import { followStatuses } from './message-status.js';

/** What the REPL-only commands change: whether to stop, and who `say` talks to. */
interface ReplState {
  quit: boolean;
  to: string | undefined;
}

function only(group: GroupSpec, names: readonly string[]): GroupSpec {
  return { ...group, commands: group.commands.filter((c) => names.includes(c.path[1]!)) };
}

/** The REPL's table: its own commands, live `send`, and the mail, allow, card and keys commands. */
function replTable(state: ReplState, extra: readonly (CommandSpec | GroupSpec)[]): CommandTable {
  const send = liveCommands.find((c) => c.path[0] === 'send')!;
  const to: CommandSpec = {
    path: ['to'],
    summary: 'choose who say talks to (without <did>: show it)',
    args: [{ name: 'did', kind: 'recipient', optional: true, help: 'the recipient' }],
    examples: ['to did:key:z6Mk...'],
    async run({ args, out }) {
      if (args.did !== undefined) state.to = args.did as string;
      out.result({ to: state.to ?? null }, () => (state.to ? `talking to ${state.to}` : 'nobody chosen: to <did>'));
    },
  };
  const say: CommandSpec = {
    path: ['say'],
    summary: 'send a live message to the one chosen with to',
    args: [{ name: 'text', rest: true, help: 'the message' }],
    examples: ['say hello again'],
    async run(ctx) {
      if (!state.to) throw new UsageError('nobody chosen yet', 'say', 'First: to <did>');
      await send.run({ ...ctx, args: { did: state.to, text: requireText(ctx.args.text as string) }, options: {} });
    },
  };
  const status: CommandSpec = {
    path: ['status'],
    summary: 'show who you are, the relay and the connection',
    async run({ live, out }) {
      const c = live!.client;
      const value = {
        did: c.did,
        id: c.id,
        relay: live!.relay,
        relay_id: c.relayId ?? null,
        state: c.state,
        session_id: c.sessionId,
        binding: c.endpoint.binding,
      };
      out.result(value, () => [
        `you        ${c.id}`,
        `relay      ${live!.relay} (${c.endpoint.binding})`,
        `relay id   ${c.relayId ?? '(not proved)'}`,
        `connection ${c.state}`,
        `session    ${c.sessionId ?? '-'}`,
      ]);
    },
  };
  const quit: CommandSpec = {
    path: ['quit'],
    summary: 'end the session (also: exit, Ctrl-D)',
    async run() {
      state.quit = true;
    },
  };
  const exit: CommandSpec = { ...quit, path: ['exit'], summary: 'end the session' };
  let table: CommandTable | undefined;
  const help: CommandSpec = {
    path: ['help'],
    summary: 'list the commands, or show one command',
    args: [{ name: 'command', rest: true, optional: true, help: 'a command, e.g. "mail send"' }],
    async run({ args, out }) {
      const words = typeof args.command === 'string' ? args.command.split(' ') : [];
      if (words.length === 0) {
        const specs = [...table!.values()].flatMap((e) => (e.kind === 'command' ? [e.spec] : [...e.commands.values()]));
        out.raw(
          [
            'Commands (Ctrl-D or quit to leave; a line starting with a space is kept out of the history):',
            ...formatRows(commandRows(specs)),
            'Type "help <command>" for its options and examples.',
            '',
          ].join('\n'),
        );
        return;
      }
      const entry = table!.get(words[0]!);
      const spec =
        entry?.kind === 'command'
          ? entry.spec
          : entry?.kind === 'group'
            ? entry.commands.get(words[1] ?? '')
            : undefined;
      if (!spec) {
        if (entry?.kind === 'group') {
          out.raw(`${formatRows(commandRows([...entry.commands.values()])).join('\n')}\n`);
          return;
        }
        throw new UsageError(`no command "${words.join(' ')}"`, undefined, 'Type: help');
      }
      out.raw(commandHelp(spec, ''));
    },
  };
  table = buildTable([help, send, to, say, status, ...extra, quit, exit]);
  return table;
}

function formatRows(rows: readonly [string, string][]): string[] {
  const width = Math.max(...rows.map(([a]) => a.length));
  return rows.map(([a, b]) => `  ${a.padEnd(width)}  ${b}`);
}

/** A usage error's hint in REPL words (`help send`, not `wmp send --help`). */
function replHint(hint: string | undefined): string | undefined {
  return hint?.replace(/Run: wmp ((?:\S+ )*)--help/, (_m, c: string) => `Type: help ${c}`.trimEnd());
}

const connect: CommandSpec = {
  path: ['connect'],
  summary: 'interactive session: type commands, see messages as they arrive',
  description: [
    'Connects to the relay (default: the first relay on your card) and reads commands: send,',
    'to/say, mail, allow, card, group, flow, keys show, status, help, quit. Incoming messages',
    '(group messages too, decrypted), statuses of the messages you sent and flow events are shown',
    'above the prompt as they arrive.',
    'History (up and down arrows) is kept in the home, last 500 lines. Ctrl-C clears the line,',
    'or leaves on an empty one; Ctrl-D leaves. Off a terminal, commands are read line by line',
    'from standard input (no prompt) until it ends.',
  ],
  args: [
    { name: 'url', kind: 'url', optional: true, help: 'the relay (http://127.0.0.1:8080, https://relay.example)' },
  ],
  options: { retries: retriesOption },
  examples: ['wmp connect http://127.0.0.1:8080', 'printf "status\\nquit\\n" | wmp connect'],
  async run(ctx: CommandContext) {
    const relay = (ctx.args.url as string | undefined) ?? (await liveRelay(ctx));
    const groups = new Map<string, Group>();
    const client = await connectLive(ctx, relay, {
      receive: true,
      prepare: async (c) => {
        for (const g of await restoreGroups(ctx, c)) groups.set(g.id, g);
      },
    });
    const live = { client, relay, groups };
    const names = await groupNames(ctx.home);
    const { stdout, stderr } = ctx;
    const terminal = Boolean((ctx.stdin as { isTTY?: boolean }).isTTY && stdout.isTTY);
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    let repl: Repl;
    // Everything printed while the REPL runs goes above the prompt (stdout and stderr alike).
    const sink = (target: NodeJS.WritableStream): TextSink => ({
      write: (text: string) => (terminal ? repl.print(text) : target.write(text)),
      isTTY: false,
    });
    const out = new Output({ stdout: sink(stdout), stderr: sink(stderr) }, { json: ctx.out.json });
    const state: ReplState = { quit: false, to: undefined };
    const table = replTable(state, [
      mailCommands,
      allowCommands,
      cardCommands,
      groupCommands,
      flowCommands,
      only(keysCommands, ['show']),
    ]);
    // Set once the connection is gone for good while the session runs (not by our own close).
    let lost = false;
    let ending = false;
    const closed = followState({ ...ctx, out }, client, relay).then(() => {
      if (ending) return;
      lost = true;
      stop.abort();
    });
    repl = new Repl({
      input: ctx.stdin,
      output: stdout,
      terminal,
      historyFile: ctx.home.historyFile,
      prompt: 'wmp> ',
      signal: stop.signal,
      onLine: async (line) => {
        try {
          const parsed = parseCommandLine(splitWords(line), table);
          if (parsed.kind === 'no-command') throw new UsageError('no command given', undefined, 'Type: help');
          if (parsed.kind === 'help') {
            const spec = parsed.topic.kind === 'command' ? parsed.topic.spec : undefined;
            out.raw(spec ? commandHelp(spec, '') : 'Type: help\n');
            return undefined;
          }
          if (parsed.kind === 'version') {
            out.result({ version: VERSION }, () => `wmp ${VERSION}`);
            return undefined;
          }
          if (parsed.globals.home !== undefined || parsed.globals.json || Object.keys(parsed.globals.tls).length > 0) {
            throw new UsageError('the global options are chosen when wmp connect starts', undefined, 'Type: help');
          }
          await parsed.spec.run({
            ...ctx,
            command: parsed.spec,
            args: parsed.args,
            options: parsed.options,
            out,
            live,
          });
        } catch (error) {
          const e = toCliError(error);
          out.error(e instanceof UsageError ? new UsageError(e.message, undefined, replHint(e.hint)) : e);
        }
        return state.quit ? 'quit' : undefined;
      },
    });
    for (const g of groups.values()) watchGroup({ out }, g, names);
    const offMessage = client.on('message', (m) => {
      const item = messageItem(m, names);
      out.item(item.value, () => item.human);
    });
    const offStatus = followStatuses(ctx, client, out);
    const offFlow = client.on('flow', (f) => {
      const item = flowItem(f);
      out.item(item.value, () => item.human);
    });
    out.note(`connected to ${relay} as ${client.id}; ${relayProofText(client)}; type help for the commands`);
    try {
      await repl.run();
    } finally {
      ending = true;
      offMessage();
      offStatus();
      offFlow();
      for (const g of groups.values()) await g.close().catch(() => undefined);
      ctx.signal.removeEventListener('abort', onAbort);
      await client.close();
      await closed;
    }
    if (lost) {
      throw new UnreachableError(
        `lost the connection to ${relay} and could not reconnect`,
        'Check that the relay is running, then connect again.',
      );
    }
  },
};

export const connectCommands: readonly CommandSpec[] = [connect];
