// wmp connect: an interactive session on one relay. Incoming messages appear above the prompt
// while you type; lines are commands from the REPL's own table (help lists it), run with the
// session's connection; history is kept in the home.
import type { Group } from '@wmp/client-sdk';
import type { CommandContext, CommandSpec, CommandTable, GroupSpec } from '../command.js';
import { buildTable } from '../command.js';
import { UnreachableError, UsageError } from '../errors.js';
import { connectLive, followState, liveRelay, liveRelayOption, retriesOption } from '../live.js';
import { commandRepl, helpCommandRun } from '../repl/command-repl.js';
import { isRelayTarget } from '../values.js';
import { allowCommands } from './allow.js';
import { cardCommands } from './card.js';
import { relayProofText, requireText } from './common.js';
import { flowCommands } from './flow.js';
import { groupCommands, groupNames, restoreGroups } from './group.js';
import { keysCommands } from './keys.js';
import { flowItem, liveCommands, messageItem, watchGroup } from './live.js';
import { mailCommands } from './mail.js';
import { followStatuses } from './message-status.js';
import { connectToPeer } from './peer-connect.js';

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
    run: helpCommandRun(() => table!),
  };
  table = buildTable([help, send, to, say, status, ...extra, quit, exit]);
  return table;
}

const connect: CommandSpec = {
  path: ['connect'],
  summary: 'interactive session: type commands, see messages as they arrive',
  description: [
    'With an identifier instead of a relay: opens a session end to end with that party through',
    'your relay (--relay, default the first on your card). The party answers it, proves who it is',
    '(refused if it cannot), and runs what you ask: flow <type>, act, resolve, say, status, quit.',
    'When it cannot answer (offline, or a client that answers no sessions), the relay hosts the',
    'session instead and wmp says so.',
    '',
    'Connects to the relay (default: the first relay on your card) and reads commands: send,',
    'to/say, mail, allow, card, group, flow, keys show, status, help, quit. Incoming messages',
    '(group messages too, decrypted), statuses of the messages you sent and flow events are shown',
    'above the prompt as they arrive.',
    'History (up and down arrows) is kept in the home, last 500 lines. Ctrl-C clears the line,',
    'or leaves on an empty one; Ctrl-D leaves. Off a terminal, commands are read line by line',
    'from standard input (no prompt) until it ends.',
  ],
  args: [
    {
      name: 'target',
      kind: 'target',
      optional: true,
      help: 'the relay (http://127.0.0.1:8080, https://relay.example), or whom to open a session with end to end',
    },
  ],
  options: {
    relay: { ...liveRelayOption, help: 'the relay to go through, for a session with a party' },
    retries: retriesOption,
  },
  examples: [
    'wmp connect http://127.0.0.1:8080',
    'printf "status\\nquit\\n" | wmp connect',
    'wmp connect did:key:z6Mk...',
  ],
  async run(ctx: CommandContext) {
    const target = ctx.args.target as string | undefined;
    if (target !== undefined && !isRelayTarget(target)) {
      await connectToPeer(ctx, await liveRelay(ctx), target);
      return;
    }
    const relay = target ?? (await liveRelay(ctx));
    const groups = new Map<string, Group>();
    const client = await connectLive(ctx, relay, {
      receive: true,
      prepare: async (c) => {
        for (const g of await restoreGroups(ctx, c)) groups.set(g.id, g);
      },
    });
    const live = { client, relay, groups };
    const names = await groupNames(ctx.home);
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    const state: ReplState = { quit: false, to: undefined };
    const table = replTable(state, [
      mailCommands,
      allowCommands,
      cardCommands,
      groupCommands,
      flowCommands,
      only(keysCommands, ['show']),
    ]);
    const repl = commandRepl(ctx, {
      table: () => table,
      live,
      prompt: 'wmp> ',
      stop: stop.signal,
      quitting: () => state.quit,
    });
    const out = repl.out;
    // Set once the connection is gone for good while the session runs (not by our own close).
    let lost = false;
    let ending = false;
    const closed = followState({ ...ctx, out }, client, relay).then(() => {
      if (ending) return;
      lost = true;
      stop.abort();
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
