// wmp group keys|create|join|add|remove|send|list: MLS groups (end-to-end encrypted) inside a
// relay-hosted group session. The relay session's participants are fixed when it is created;
// within them, members are added (with a key package they published) and removed by MLS commits.
import { Group, type WmpClient } from '@wmp/client-sdk';
import type { CommandContext, CommandSpec, GroupSpec } from '../command.js';
import { NotFoundError, UsageError } from '../errors.js';
import type { Home } from '../home.js';
import { liveRelayOption, retriesOption, withClient } from '../live.js';
import { toCliError } from '../to-cli-error.js';
import { requireText, shortDid } from './common.js';

/** Store keys of group names: this prefix + the name -> the group session id. */
export const GROUP_NAME_PREFIX = 'cli/group-name/';
const SESSION_ID = /^ses-[A-Za-z0-9]{1,128}$/;

const live = { relay: liveRelayOption, retries: retriesOption };
const groupArg = { name: 'group', help: 'the group: the name you gave it, or its id (ses-...)' } as const;

/** Group session id -> the name given to it in this home. */
export async function groupNames(home: Home): Promise<Map<string, string>> {
  const store = home.store();
  const names = new Map<string, string>();
  for (const key of await store.keys(GROUP_NAME_PREFIX)) {
    const id = await store.get(key);
    if (id && SESSION_ID.test(id)) names.set(id, key.slice(GROUP_NAME_PREFIX.length));
  }
  return names;
}

async function nameGroup(ctx: CommandContext, name: string | undefined, id: string): Promise<void> {
  if (name !== undefined) await ctx.home.store().set(GROUP_NAME_PREFIX + name, id);
}

/** A name or an id as the group session id. */
async function groupId(ctx: CommandContext, text: string): Promise<string> {
  if (SESSION_ID.test(text)) return text;
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(text)) {
    throw new UsageError(`<group>: "${text}" is not a group name or id (ses-...)`, ctx.command.path.join(' '));
  }
  const id = await ctx.home.store().get(GROUP_NAME_PREFIX + text);
  if (id === undefined)
    throw new NotFoundError(`no group named "${text}" in ${ctx.home.dir}`, 'See your groups: wmp group list');
  return id;
}

/** What every Group call needs: the home's identity (its key signs MLS) and store. */
async function groupOptions(ctx: CommandContext) {
  return { identity: await ctx.home.identity(), store: ctx.home.store() };
}

/** Runs `fn` on the stored group `id`, restored on a connected client; closes it after. */
async function withGroup<T>(
  ctx: CommandContext,
  id: string,
  fn: (group: Group, client: WmpClient) => Promise<T>,
): Promise<T> {
  const options = await groupOptions(ctx);
  return withClient(ctx, async (client) => {
    const running = ctx.live?.client === client ? ctx.live.groups.get(id) : undefined;
    if (running) return fn(running, client);
    if (!client.group(id)) {
      throw new NotFoundError(
        `this home holds no group session ${id} at this relay`,
        'Join it first (wmp group join <id>), or check --relay: groups live on the relay they were made on.',
      );
    }
    const group = await Group.restore(client, id, options);
    try {
      await group.sync({ signal: ctx.signal });
      return await fn(group, client);
    } finally {
      await release(ctx, client, group);
    }
  });
}

/** Closes `group` after a command, unless the REPL's session keeps it running (it reads its messages). */
async function release(ctx: CommandContext, client: WmpClient, group: Group): Promise<void> {
  if (ctx.live?.client === client) {
    ctx.live.groups.set(group.id, group);
    return;
  }
  await group.close();
}

/** Restores every group this home holds on `client` (listen and connect read their messages). */
export async function restoreGroups(ctx: CommandContext, client: WmpClient): Promise<Group[]> {
  const options = await groupOptions(ctx);
  const groups: Group[] = [];
  for (const id of await Group.stored(ctx.home.store())) {
    if (!client.group(id)) continue;
    try {
      groups.push(await Group.restore(client, id, options));
    } catch (error) {
      ctx.out.warn(`group ${id} could not be restored: ${toCliError(error).message}`, 'group_restore');
    }
  }
  return groups;
}

const keys: CommandSpec = {
  path: ['group', 'keys'],
  summary: 'publish key packages at the relay so that others can add you to groups',
  description: [
    'Each key package lets one member add you to one group; the relay hands each out once and',
    'keeps them in memory only (publish again after it restarts). The private halves stay in',
    'the home.',
  ],
  options: { count: { kind: 'int', min: 1, max: 100, default: '10', help: 'how many to publish' }, ...live },
  examples: ['wmp group keys', 'wmp group keys --count 20 --relay http://127.0.0.1:8080'],
  async run(ctx) {
    const options = await groupOptions(ctx);
    const count = (ctx.options.count as number | undefined) ?? 10;
    await withClient(ctx, async (client, relay) => {
      const accepted = await Group.publishKeyPackages(client, count, { ...options, signal: ctx.signal });
      ctx.out.result(
        { relay, published: count, accepted },
        () => `published ${accepted} key package${accepted === 1 ? '' : 's'} at ${relay}`,
      );
    });
  },
};

const create: CommandSpec = {
  path: ['group', 'create'],
  summary: 'make a group with these people and add them',
  description: [
    'Creates a group session at the relay whose participants are you, <did...> and every --later',
    'identity (nobody else can ever be added), an MLS group with you in it, and adds each <did>',
    'with a key package they published (wmp group keys). Tell them the id it prints: they',
    'join with wmp group join <id>.',
  ],
  args: [
    { name: 'name', kind: 'name', help: 'a name for the group in your home (e.g. team)' },
    { name: 'did', kind: 'did', list: true, help: 'the members to add now' },
  ],
  options: {
    later: { kind: 'did', multiple: true, help: 'a participant to add later (with wmp group add)' },
    ...live,
  },
  examples: [
    'wmp group create team did:key:z6MkB... did:key:z6MkC...',
    'wmp group create team did:key:z6MkB... --later did:key:z6MkC...',
  ],
  async run(ctx) {
    const options = await groupOptions(ctx);
    const name = ctx.args.name as string;
    const dids = [...new Set(ctx.args.did as string[])];
    const later = ((ctx.options.later as string[] | undefined) ?? []).filter((d) => !dids.includes(d));
    if ((await ctx.home.store().get(GROUP_NAME_PREFIX + name)) !== undefined) {
      throw new UsageError(
        `you already have a group named "${name}"`,
        'group create',
        'Choose another name (wmp group list).',
      );
    }
    await withClient(ctx, async (client, relay) => {
      if (dids.includes(client.did))
        throw new UsageError('you are in the group anyway; list the others', 'group create');
      const group = await Group.create(client, [...dids, ...later], { ...options, signal: ctx.signal });
      try {
        await nameGroup(ctx, name, group.id);
        const added: string[] = [];
        const failed: { did: string; error: string }[] = [];
        for (const did of dids) {
          try {
            await group.add(did, { signal: ctx.signal });
            added.push(did);
          } catch (error) {
            const e = toCliError(error);
            failed.push({ did, error: e.message });
            ctx.out.warn(`${did} was not added: ${e.message}`, 'group_add');
          }
        }
        ctx.out.result(
          {
            name,
            id: group.id,
            relay,
            epoch: group.epoch,
            members: group.members,
            added,
            failed,
            participants: group.session.members,
          },
          () => [
            `group ${name} (${group.id}) on ${relay}: ${group.members.length} member${group.members.length === 1 ? '' : 's'}, epoch ${group.epoch}`,
            ...added.map((d) => `  added ${d}`),
            ...failed.map((f) => `  not added ${f.did}: ${f.error}`),
            `They join with: wmp group join ${group.id} --name ${name}`,
          ],
        );
      } finally {
        await release(ctx, client, group);
      }
    });
  },
};

const join: CommandSpec = {
  path: ['group', 'join'],
  summary: 'enter a group you were added to, and wait for its keys',
  description: [
    'Joins the relay group session <id> (you must be one of its participants) and waits for the',
    'Welcome of a member who added you (publish key packages first: wmp group keys).',
  ],
  args: [{ name: 'id', help: 'the group id (ses-...) its creator gave you' }],
  options: {
    name: { kind: 'name', help: 'a name for the group in your home' },
    timeout: { kind: 'int', min: 1, max: 3600, default: '30', help: 'seconds to wait for the Welcome' },
    ...live,
  },
  examples: ['wmp group join ses-2Vd9... --name team'],
  async run(ctx) {
    const options = await groupOptions(ctx);
    const id = ctx.args.id as string;
    if (!SESSION_ID.test(id)) throw new UsageError(`<id>: "${id}" is not a group id (ses-...)`, 'group join');
    const timeoutMs = ((ctx.options.timeout as number | undefined) ?? 30) * 1000;
    await withClient(ctx, async (client, relay) => {
      const group = await Group.join(client, id, { ...options, signal: ctx.signal });
      try {
        await group.whenJoined({ timeoutMs, signal: ctx.signal });
        await nameGroup(ctx, ctx.options.name as string | undefined, id);
        ctx.out.result(
          { id, name: ctx.options.name ?? null, relay, epoch: group.epoch, members: group.members },
          () => [
            `joined ${ctx.options.name ?? id} at epoch ${group.epoch}; members:`,
            ...group.members.map((m) => `  ${m}`),
          ],
        );
      } finally {
        await release(ctx, client, group);
      }
    });
  },
};

/** `group add` and `group remove`: one commit changing who is in the group. */
function membershipCommand(
  kind: 'add' | 'remove',
  summary: string,
  didHelp: string,
  done: { readonly key: 'added' | 'removed'; readonly verb: string },
): CommandSpec {
  return {
    path: ['group', kind],
    summary,
    args: [groupArg, { name: 'did', kind: 'did', help: didHelp }],
    options: live,
    examples: [`wmp group ${kind} team did:key:z6Mk...`],
    async run(ctx) {
      const id = await groupId(ctx, ctx.args.group as string);
      const did = ctx.args.did as string;
      await withGroup(ctx, id, async (group) => {
        const r = await group[kind](did, { signal: ctx.signal });
        ctx.out.result(
          { id, [done.key]: did, epoch: r.epoch, members: group.members },
          () => `${done.verb} ${shortDid(did)}; epoch ${r.epoch}, ${group.members.length} members`,
        );
      });
    },
  };
}

const add = membershipCommand(
  'add',
  'add a participant to the group (they need a published key package)',
  'who to add (one of the participants named at create)',
  { key: 'added', verb: 'added' },
);

const remove = membershipCommand('remove', 'remove a member: they cannot read anything sent after', 'who to remove', {
  key: 'removed',
  verb: 'removed',
});

const send: CommandSpec = {
  path: ['group', 'send'],
  summary: 'send an end-to-end encrypted message to the group',
  args: [groupArg, { name: 'text', rest: true, help: 'the message (the rest of the line)' }],
  options: live,
  examples: ['wmp group send team lunch at noon?'],
  async run(ctx) {
    const id = await groupId(ctx, ctx.args.group as string);
    const text = requireText(ctx.args.text as string);
    await withGroup(ctx, id, async (group) => {
      const r = await group.send({ text }, { signal: ctx.signal });
      ctx.out.result(
        { id, message_id: r.messageId, epoch: r.epoch, to: group.members.filter((m) => m !== group.identity) },
        () =>
          `sent to ${group.members.length - 1} member${group.members.length === 2 ? '' : 's'} (epoch ${r.epoch}, message ${r.messageId})`,
      );
    });
  },
};

const list: CommandSpec = {
  path: ['group', 'list'],
  summary: 'list the groups this home holds',
  examples: ['wmp group list', 'wmp --json group list'],
  async run(ctx) {
    const names = await groupNames(ctx.home);
    const ids = await Group.stored(ctx.home.store());
    const rows = ids.map((id) => ({ id, name: names.get(id) ?? null }));
    ctx.out.result({ groups: rows }, () =>
      rows.length === 0
        ? 'no groups yet (wmp group create, or wmp group join)'
        : rows.map((r) => `${r.name ?? '-'}  ${r.id}`),
    );
  },
};

export const groupCommands: GroupSpec = {
  name: 'group',
  summary: 'MLS groups: publish keys, create, join, add, remove, send',
  commands: [keys, create, join, add, remove, send, list],
};
