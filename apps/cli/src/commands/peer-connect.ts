// wmp connect <identifier>: an interactive session end to end with another party through the relay
// (transport §6.2): the other party answers the session, proves who it is and runs its flows and
// resolvers; the relay only routes. The REPL's table acts on that one session.
import type { PeerSession } from '@wmp/client-sdk';
import type { CommandContext, CommandSpec, CommandTable } from '../command.js';
import { buildTable } from '../command.js';
import { UnreachableError } from '../errors.js';
import { connectLive, followState } from '../live.js';
import { commandRepl, helpCommandRun } from '../repl/command-repl.js';
import { peerFlowCommands } from './built-in-flows.js';
import { printable, requireText, shortDid } from './common.js';
import { paramOption, paramsOf } from './flow.js';

/** What the session's commands share: the session, and whether to stop. */
interface PeerReplState {
  readonly session: PeerSession;
  quit: boolean;
}

function peerTable(state: PeerReplState): CommandTable {
  const { session } = state;
  const say: CommandSpec = {
    path: ['say'],
    summary: 'send a message on the session (the relay stores it until it is handed over)',
    args: [{ name: 'text', rest: true, help: 'the message' }],
    examples: ['say hello'],
    async run({ args, out, signal }) {
      const answer = (await session.send({ text: requireText(args.text as string) }, { signal })) as {
        message_id?: string;
        status?: string;
      };
      out.result(
        { message_id: answer.message_id ?? null, status: answer.status ?? null },
        () => `${answer.status ?? 'sent'} (message ${answer.message_id ?? '?'})`,
      );
    },
  };
  const flow: CommandSpec = {
    path: ['flow'],
    summary: 'start a flow the other party runs, and follow it to its end',
    args: [{ name: 'type', kind: 'name', help: 'the flow type (approval, sign, ...)' }],
    options: { param: paramOption },
    examples: ['flow approval --param subject="Pay invoice 42"', 'flow sign --param action=authorize'],
    async run(ctx) {
      const type = ctx.args.type as string;
      const started = await session.startFlow(type, paramsOf(ctx), {
        signal: ctx.signal,
        onProgress: (step, payload) =>
          ctx.out.item(
            { type: 'flow_progress', step, payload: payload ?? null },
            () => `  step ${step}${payload ? ` ${printable(JSON.stringify(payload))}` : ''}`,
          ),
      });
      ctx.out.note(`started ${type} flow ${started.flowId}; act on it with: act ${started.flowId} <action>`);
      const result = await started.done;
      ctx.out.result(
        { flow_id: started.flowId, state: 'completed', result },
        () => `flow ${started.flowId} completed: ${printable(JSON.stringify(result))}`,
      );
    },
  };
  const act: CommandSpec = {
    path: ['act'],
    summary: 'act on a flow of this session (approve, reject, submit, ...)',
    args: [
      { name: 'flow-id', kind: 'name', help: 'the flow' },
      { name: 'action', kind: 'name', help: 'the action' },
    ],
    options: { param: paramOption },
    examples: ['act flow-abc123 approve'],
    async run(ctx) {
      const id = ctx.args['flow-id'] as string;
      const action = ctx.args.action as string;
      const r = await session.actOnFlow(id, action, paramsOf(ctx), { signal: ctx.signal });
      ctx.out.result(
        { flow_id: id, action, status: r.status ?? null },
        () => `${action} on ${id}: ${r.status ?? 'ok'}`,
      );
    },
  };
  const resolve: CommandSpec = {
    path: ['resolve'],
    summary: 'ask the other party to resolve a URI (wmp.resolve)',
    args: [{ name: 'uri', help: 'what to resolve' }],
    options: { type: { kind: 'name', help: 'the resolve type', default: 'endpoint' } },
    examples: ['resolve wmp:bob', 'resolve https://issuer.example --type issuer_metadata'],
    async run({ args, options, out, signal }) {
      const type = (options.type as string | undefined) ?? 'endpoint';
      const answer = (await session.resolve(args.uri as string, type, { signal })) as Record<string, unknown>;
      out.result(answer, () => printable(JSON.stringify(answer.metadata ?? answer)));
    },
  };
  const status: CommandSpec = {
    path: ['status'],
    summary: 'show the session: who answered it, what was negotiated',
    async run({ out }) {
      const value = {
        session_id: session.id,
        peer: session.peer,
        responder: session.responder ?? null,
        relay_hosted: session.relayHosted,
        capabilities: Object.keys(session.capabilities),
      };
      out.result(value, () => [
        `session    ${session.id}`,
        `with       ${session.peer}`,
        `proved     ${session.responder ?? '(not proved)'}`,
        `end to end ${session.relayHosted ? 'no: the relay hosts it' : 'yes'}`,
        `capable of ${value.capabilities.join(', ') || '-'}`,
      ]);
    },
  };
  const quit: CommandSpec = {
    path: ['quit'],
    summary: 'close the session and leave (also: exit, close, Ctrl-D)',
    async run() {
      state.quit = true;
    },
  };
  let table: CommandTable | undefined;
  const help: CommandSpec = {
    path: ['help'],
    summary: 'list the commands, or show one command',
    args: [{ name: 'command', rest: true, optional: true, help: 'a command' }],
    run: helpCommandRun(() => table!),
  };
  table = buildTable([
    help,
    say,
    ...peerFlowCommands(session),
    flow,
    act,
    resolve,
    status,
    quit,
    { ...quit, path: ['exit'], summary: 'close the session and leave' },
    { ...quit, path: ['close'], summary: 'close the session and leave' },
  ]);
  return table;
}

/** The REPL of a session end to end with `peer`, through `relay`. */
export async function connectToPeer(ctx: CommandContext, relay: string, peer: string): Promise<void> {
  const client = await connectLive(ctx, relay);
  let session: PeerSession;
  try {
    session = await client.openSession(peer, { signal: ctx.signal });
  } catch (error) {
    await client.close();
    throw error;
  }
  const state: PeerReplState = { session, quit: false };
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  const repl = commandRepl(ctx, {
    table: () => table,
    live: { client, relay, groups: new Map() },
    prompt: `${shortDid(peer)}> `,
    stop: stop.signal,
    quitting: () => state.quit,
  });
  const table = peerTable(state);
  const out = repl.out;
  let ending = false;
  let lost = false;
  const closed = followState({ ...ctx, out }, client, relay).then(() => {
    if (ending) return;
    lost = true;
    stop.abort();
  });
  let closedByPeer = false;
  session.on('message', (m) => {
    out.item(
      { type: 'message', from: m.from ?? null, body: m.body },
      () =>
        `${shortDid(m.from ?? peer)}: ${printable(typeof m.body === 'object' && m.body !== null && 'text' in m.body ? String((m.body as { text: unknown }).text) : JSON.stringify(m.body))}`,
    );
  });
  session.on('closed', ({ by }) => {
    if (by !== 'peer') return;
    closedByPeer = true;
    out.note(`${shortDid(peer)} closed the session`);
    stop.abort();
  });
  out.note(
    session.relayHosted
      ? `${shortDid(peer)} could not answer: the relay hosts this session (messages are queued for them; flows and resolve go to the relay); type help`
      : `session ${session.id} with ${peer}, who proved it is them; type help for the commands`,
  );
  try {
    await repl.run();
  } finally {
    ending = true;
    ctx.signal.removeEventListener('abort', onAbort);
    if (!closedByPeer) await session.close().catch(() => undefined);
    await client.close();
    await closed;
  }
  if (lost) {
    throw new UnreachableError(
      `lost the connection to ${relay} and could not reconnect`,
      'Check that the relay is running, then connect again.',
    );
  }
}
