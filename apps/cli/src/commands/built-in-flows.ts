// The built-in approval and sign flows (core §6.3, §6.4) from the command line, on a session end
// to end with the party asked (transport §6.2): `wmp flow approve|sign <identifier>` asks and
// prints the answer (a signature verified), and the REPL of `wmp connect <identifier>` has the
// same as `approve` and `sign`.
import type { PeerSession } from '@wmp/client-sdk';
import type { CommandContext, CommandSpec, OptionSpec } from '../command.js';
import { UsageError } from '../errors.js';
import { liveRelayOption, retriesOption, withClient } from '../live.js';
import { printable, requireText, shortDid } from './common.js';

const SIGN_ACTIONS = ['generate_proof', 'sign_document', 'authorize'] as const;
type SignAction = (typeof SIGN_ACTIONS)[number];

const timeoutOption: OptionSpec = {
  kind: 'int',
  min: 1,
  max: 86_400,
  help: 'seconds the other party has to answer',
  default: '600',
};

/** Asks `session`'s party to approve `subject`; prints `{approved, approver, timestamp}`. */
async function askApproval(ctx: CommandContext, session: PeerSession, subject: string): Promise<void> {
  const timeout = ctx.options.timeout as number | undefined;
  const result = await session.requestApproval(
    { subject },
    {
      ...(timeout === undefined ? {} : { timeout }),
      onProgress: (step) => ctx.out.note(`  ${step}`),
    },
  );
  ctx.out.result(
    { ...result },
    () => `${result.approved ? 'approved' : 'rejected'} by ${shortDid(result.approver)} at ${result.timestamp}`,
  );
}

/** Asks `session`'s party to sign; prints who signed, once the proof verified. */
async function askSignature(ctx: CommandContext, session: PeerSession, action: string, payload: string | undefined) {
  if (!(SIGN_ACTIONS as readonly string[]).includes(action)) {
    throw new UsageError(`"${action}" is no sign action: ${SIGN_ACTIONS.join(', ')}`, ctx.command.path.join(' '));
  }
  if (action !== 'generate_proof' && payload === undefined) {
    throw new UsageError(`${action} signs something: give the text to sign`, ctx.command.path.join(' '));
  }
  const timeout = ctx.options.timeout as number | undefined;
  const result = await session.requestSignature(
    { action: action as SignAction, ...(payload === undefined ? {} : { payload }) },
    { ...(timeout === undefined ? {} : { timeout }), onProgress: (step) => ctx.out.note(`  ${step}`) },
  );
  ctx.out.result(
    { action: result.action, signer: result.signer, proof_type: result.proofType, proof: result.proof, verified: true },
    () => `signed by ${shortDid(result.signer)} (${result.action}; the proof verified)`,
  );
}

/** Runs `fn` on a session end to end with `peer` (the REPL's own session when it is that party's). */
async function withPeerSession(ctx: CommandContext, peer: string, fn: (s: PeerSession) => Promise<void>) {
  await withClient(ctx, async (client) => {
    const session = await client.openSession(peer, { signal: ctx.signal, whenHosted: 'refuse' });
    try {
      await fn(session);
    } finally {
      await session.close().catch(() => undefined);
    }
  });
}

const approve: CommandSpec = {
  path: ['flow', 'approve'],
  summary: 'ask another party to approve something (its answer, end to end through your relay)',
  args: [
    { name: 'id', kind: 'recipient', help: 'who is asked' },
    { name: 'subject', rest: true, help: 'what to approve' },
  ],
  options: { timeout: timeoutOption, relay: liveRelayOption, retries: retriesOption },
  examples: ['wmp flow approve did:key:z6Mk... pay invoice 42'],
  async run(ctx) {
    await withPeerSession(ctx, ctx.args.id as string, (s) =>
      askApproval(ctx, s, requireText(ctx.args.subject as string)),
    );
  },
};

const sign: CommandSpec = {
  path: ['flow', 'sign'],
  summary: 'ask another party to sign (a proof, a document, an authorization), verified',
  args: [
    { name: 'id', kind: 'recipient', help: 'who signs' },
    { name: 'action', kind: 'name', help: 'generate_proof, sign_document or authorize' },
    { name: 'payload', rest: true, optional: true, help: 'the text to sign (sign_document, authorize)' },
  ],
  options: { timeout: timeoutOption, relay: liveRelayOption, retries: retriesOption },
  examples: [
    'wmp flow sign did:key:z6Mk... sign_document I agree to the terms',
    'wmp flow sign did:key:z6Mk... generate_proof',
  ],
  async run(ctx) {
    const payload = ctx.args.payload as string | undefined;
    await withPeerSession(ctx, ctx.args.id as string, (s) =>
      askSignature(ctx, s, ctx.args.action as string, payload === '' ? undefined : payload),
    );
  },
};

export const builtInFlowCommands: readonly CommandSpec[] = [approve, sign];

/** `approve` and `sign` of the REPL of `wmp connect <identifier>`, on its session. */
export function peerFlowCommands(session: PeerSession): CommandSpec[] {
  return [
    {
      path: ['approve'],
      summary: 'ask them to approve something',
      args: [{ name: 'subject', rest: true, help: 'what to approve' }],
      options: { timeout: timeoutOption },
      examples: ['approve pay invoice 42'],
      run: (ctx) => askApproval(ctx, session, requireText(ctx.args.subject as string)),
    },
    {
      path: ['sign'],
      summary: 'ask them to sign (generate_proof, sign_document, authorize), verified',
      args: [
        { name: 'action', kind: 'name', help: 'generate_proof, sign_document or authorize' },
        { name: 'payload', rest: true, optional: true, help: 'the text to sign' },
      ],
      options: { timeout: timeoutOption },
      examples: ['sign sign_document I agree'],
      run: (ctx) => {
        const payload = ctx.args.payload as string | undefined;
        return askSignature(ctx, session, ctx.args.action as string, payload === '' ? undefined : payload);
      },
    },
  ];
}

/** The party's answer to a question asked at the terminal of `wmp serve`, printed. */
export function consentText(kind: 'approve' | 'sign', what: unknown, from: string | undefined): string {
  return `${kind} ${printable(JSON.stringify(what))} for ${from ? shortDid(from) : 'someone'}?`;
}
