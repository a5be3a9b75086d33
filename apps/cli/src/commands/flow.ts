// wmp flow start|act|cancel: WMP flows (approval, sign, message, ...) on your session with a WMP
// responder that runs them (a wallet or an agent; a relay routes messages and runs no flows). The
// session is kept in the home, so a flow started by one command can be acted on by the next.
import type { FlowHandle } from '@wmp/client-sdk';
import { b64urlEncode, randomBytes } from '@wmp/jcs-signing';
import type { CommandContext, CommandSpec, GroupSpec, OptionSpec } from '../command.js';
import { InterruptedError, UsageError } from '../errors.js';
import { liveRelayOption, retriesOption, withClient } from '../live.js';
import { builtInFlowCommands } from './built-in-flows.js';
import { printable } from './common.js';

export const paramOption: OptionSpec = {
  kind: 'text',
  multiple: true,
  placeholder: 'key=value',
  help: 'a parameter; a value that is JSON (10, true, {"a":1}) is taken as JSON, else as text',
};

const MAX_PARAMS = 64;

/** `--param k=v ...` as an object. */
export function paramsOf(ctx: Pick<CommandContext, 'command' | 'options'>): Record<string, unknown> {
  const list = (ctx.options.param as readonly string[] | undefined) ?? [];
  if (list.length > MAX_PARAMS) throw new UsageError(`at most ${MAX_PARAMS} --param`, ctx.command.path.join(' '));
  const params: Record<string, unknown> = {};
  for (const item of list) {
    const at = item.indexOf('=');
    const key = at > 0 ? item.slice(0, at) : '';
    if (!/^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/.test(key)) {
      throw new UsageError(`--param "${item}": give key=value (like subject=lunch)`, ctx.command.path.join(' '));
    }
    const text = item.slice(at + 1);
    let value: unknown = text;
    try {
      value = JSON.parse(text);
    } catch {
      // Plain text.
    }
    params[key] = value;
  }
  return params;
}

const start: CommandSpec = {
  path: ['flow', 'start'],
  summary: 'start a flow with a WMP responder (a wallet or agent that runs flows)',
  description: [
    'Built-in types: approval (actions approve, reject, comment), sign (needs --param action=',
    'generate_proof|sign_document|authorize; actions submit, decline) and message. The responder',
    'runs the flow until it ends or --timeout passes; wmp flow act acts on it later (the session',
    'is kept in the home). With --wait, progress is shown until the flow ends. Relays route',
    'messages and run no flows: they answer Capability not supported.',
  ],
  args: [{ name: 'type', kind: 'name', help: 'the flow type (approval, sign, message, ...)' }],
  options: {
    param: paramOption,
    id: { kind: 'name', help: 'the flow id to use', default: 'a fresh random one' },
    timeout: { kind: 'int', min: 1, max: 86_400, help: 'seconds the flow may take', default: "the relay's (600)" },
    wait: { kind: 'flag', help: 'follow the flow until it completes or fails' },
    relay: { ...liveRelayOption, help: 'the responder to connect to' },
    retries: retriesOption,
  },
  examples: [
    'wmp flow start approval --param subject="Pay invoice 42" --param amount=120 --relay https://wallet.example',
    'wmp flow start sign --param action=sign_document --param payload=hello --timeout 60',
  ],
  async run(ctx) {
    const type = ctx.args.type as string;
    const params = paramsOf(ctx);
    // Known before the start: progress can arrive before the start's answer.
    const wait = ctx.options.wait === true;
    const flowId = typeof ctx.options.id === 'string' ? ctx.options.id : `flow-${b64urlEncode(randomBytes(12))}`;
    await withClient(ctx, async (client, relay) => {
      const handle: FlowHandle = await client.startFlow(type, params, {
        signal: ctx.signal,
        flowId,
        ...(ctx.options.timeout === undefined ? {} : { timeout: ctx.options.timeout as number }),
        // Progress is shown while waiting only: without --wait the output is the one result.
        onProgress: (step, payload) => {
          if (!wait) return;
          ctx.out.item(
            { type: 'flow_progress', flow_id: flowId, step, payload },
            () => `  step ${step}${payload ? ` ${printable(JSON.stringify(payload))}` : ''}`,
          );
        },
      });
      const value = { flow_id: handle.id, type, session_id: handle.sessionId, relay };
      if (!wait) {
        ctx.out.result({ ...value, state: 'in_progress' }, () => [
          `started ${type} flow ${handle.id} on ${relay}`,
          `Act on it: wmp flow act ${handle.id} <action>`,
        ]);
        return;
      }
      ctx.out.note(`started ${type} flow ${handle.id}; waiting for it to end (Ctrl-C to stop waiting)`);
      const aborted = new Promise<never>((_r, reject) =>
        ctx.signal.addEventListener('abort', () => reject(new InterruptedError()), { once: true }),
      );
      aborted.catch(() => undefined);
      const result = await Promise.race([handle.done, aborted]);
      ctx.out.result(
        { ...value, state: 'completed', result },
        () => `flow ${handle.id} completed: ${JSON.stringify(result)}`,
      );
    });
  },
};

const act: CommandSpec = {
  path: ['flow', 'act'],
  summary: 'act on a flow (approve, reject, comment, submit, ...)',
  args: [
    { name: 'flow-id', kind: 'name', help: 'the flow (as wmp flow start printed it)' },
    { name: 'action', kind: 'name', help: 'what to do: approve, reject, comment, submit, decline, ...' },
  ],
  options: {
    param: paramOption,
    relay: { ...liveRelayOption, help: 'the responder to connect to' },
    retries: retriesOption,
  },
  examples: ['wmp flow act flow-abc123 approve --param comment="looks good"', 'wmp flow act flow-abc123 reject'],
  async run(ctx) {
    const flowId = ctx.args['flow-id'] as string;
    const action = ctx.args.action as string;
    const params = paramsOf(ctx);
    await withClient(ctx, async (client) => {
      const r = await client.actOnFlow(flowId, action, params, { signal: ctx.signal });
      ctx.out.result(
        { flow_id: flowId, action, status: r.status ?? null },
        () => `${action} on flow ${flowId}: ${r.status ?? 'accepted'}`,
      );
    });
  },
};

const cancel: CommandSpec = {
  path: ['flow', 'cancel'],
  summary: 'cancel a flow you started',
  args: [{ name: 'flow-id', kind: 'name', help: 'the flow' }],
  options: { relay: { ...liveRelayOption, help: 'the responder to connect to' }, retries: retriesOption },
  examples: ['wmp flow cancel flow-abc123'],
  async run(ctx) {
    const flowId = ctx.args['flow-id'] as string;
    await withClient(ctx, async (client) => {
      await client.cancelFlow(flowId, { signal: ctx.signal });
      ctx.out.result({ flow_id: flowId, state: 'cancelled' }, () => `cancelled flow ${flowId}`);
    });
  },
};

export const flowCommands: GroupSpec = {
  name: 'flow',
  summary: 'WMP flows: ask another party to approve or sign; start, act, cancel with a responder',
  commands: [...builtInFlowCommands, start, act, cancel],
};
