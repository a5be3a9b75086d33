// wmp allow add|remove|list: your allow list on each of your boxes. Mail from a key on it goes in
// the contact lane: no proof-of-work stamp, and far more room than a stranger gets.
import type { AllowOutcome } from '@wmp/client-sdk';
import type { CommandContext, CommandSpec, GroupSpec } from '../command.js';
import { boxRelayOption, didOfKey, openMailbox, outcomeError, relaysOf, settle } from './common.js';

const relay = { ...boxRelayOption, help: 'change or read the list on this relay instead of those on your card' };

function report(ctx: CommandContext, verb: string, dids: readonly string[], outcomes: readonly AllowOutcome[]): void {
  settle(ctx, outcomes);
  const rows = outcomes.map((o) =>
    o.ok
      ? { relay: o.relay, ok: true, contacts: o.contacts.map(didOfKey) }
      : { relay: o.relay, ok: false, error: outcomeError(o.error) },
  );
  ctx.out.result({ [verb]: dids, relays: rows }, () => [
    `${verb} ${dids.length} contact${dids.length === 1 ? '' : 's'} on ${rows.filter((r) => r.ok).length} of ${rows.length} relay${rows.length === 1 ? '' : 's'}`,
    ...rows.map((r) =>
      r.ok ? `  ${r.relay}  ${r.contacts?.length} allowed` : `  ${r.relay}  failed: ${r.error?.message}`,
    ),
  ]);
}

const add: CommandSpec = {
  path: ['allow', 'add'],
  summary: 'let these people mail you as contacts (no stamp needed)',
  args: [{ name: 'did', kind: 'did', list: true, help: 'one or more identities (did:key:z6Mk... or z6Mk...)' }],
  options: { relay },
  examples: ['wmp allow add did:key:z6Mk...', 'wmp allow add did:key:z6MkA... did:key:z6MkB...'],
  async run(ctx) {
    const dids = ctx.args.did as string[];
    const mailbox = await openMailbox(ctx, relaysOf(ctx));
    report(ctx, 'added', dids, await mailbox.allow.add(dids, { signal: ctx.signal }));
  },
};

const remove: CommandSpec = {
  path: ['allow', 'remove'],
  summary: 'take people off your allow list',
  args: [{ name: 'did', kind: 'did', list: true, help: 'one or more identities' }],
  options: { relay },
  examples: ['wmp allow remove did:key:z6Mk...'],
  async run(ctx) {
    const dids = ctx.args.did as string[];
    const mailbox = await openMailbox(ctx, relaysOf(ctx));
    report(ctx, 'removed', dids, await mailbox.allow.remove(dids, { signal: ctx.signal }));
  },
};

const list: CommandSpec = {
  path: ['allow', 'list'],
  summary: 'show your allow list (the union over your relays)',
  options: { relay },
  examples: ['wmp allow list', 'wmp --json allow list'],
  async run(ctx) {
    const mailbox = await openMailbox(ctx, relaysOf(ctx));
    const contacts = (await mailbox.allow.list({ signal: ctx.signal })).map(didOfKey);
    ctx.out.result({ contacts }, () => (contacts.length === 0 ? 'nobody is on your allow list' : contacts));
  },
};

export const allowCommands: GroupSpec = {
  name: 'allow',
  summary: 'your allow list: who may mail you as a contact',
  commands: [add, remove, list],
};
