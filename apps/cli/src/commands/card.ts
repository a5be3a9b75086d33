// wmp card publish|show|import: your OHAN card (signing key, sealing key, the relays that hold
// your mail) and other people's cards.
import { readFile } from 'node:fs/promises';
import type { Card } from '@wmp/client-sdk';
import { verifyCardJson } from '../card-json.js';
import type { CommandContext, CommandSpec, GroupSpec } from '../command.js';
import { CliError, NotFoundError, UsageError } from '../errors.js';
import { saveContactCard } from '../state.js';
import { readStdin } from '../stdin.js';
import { mailboxCliError } from '../to-cli-error.js';
import { boxRelayOption, didOfKey, findCard, openMailbox, outcomeError, relaysOf, settle } from './common.js';

function cardValue(card: Card) {
  return { did: didOfKey(card.key), card };
}

function cardLines(card: Card): string[] {
  return [
    `did          ${didOfKey(card.key)}`,
    `signing key  ${card.key}`,
    `sealing key  ${card.enc}`,
    `relays       ${card.relays.join(' ')}`,
    `signed at    ${card.ts}`,
  ];
}

const publish: CommandSpec = {
  path: ['card', 'publish'],
  summary: 'sign your card and publish it to the directory of each relay',
  description: [
    'Your card names your keys and the relays whose boxes hold your sealed mail (1 to 16). It is',
    'posted to each relay, and kept in the home once one of them took it (a card no relay took is',
    'not kept: the one before stays, and with it the relay the live commands use). Relays in',
    'relay-only mode keep no cards (share yours with wmp card show --json instead). Without',
    '--relay the relays of your current card are used again (a fresh signature).',
  ],
  options: {
    relay: { kind: 'url', multiple: true, help: 'a relay that holds your mail (1 to 16)' },
  },
  examples: [
    'wmp card publish --relay http://127.0.0.1:8080',
    'wmp card publish --relay https://relay-a.example --relay https://relay-b.example',
  ],
  async run(ctx) {
    const mailbox = await openMailbox(ctx);
    let relays = relaysOf(ctx);
    if (!relays) {
      const current = await mailbox.card();
      if (!current) throw new UsageError('give at least one --relay (you have no card yet)', 'card publish');
      relays = [...current.relays];
    }
    if (new Set(relays).size !== relays.length || relays.length > 16) {
      throw new UsageError('--relay: 1 to 16 different relays', 'card publish');
    }
    const { card, outcomes, saved } = await mailbox.publishCard(relays, { signal: ctx.signal });
    const relayOnly = (o: (typeof outcomes)[number]) => !o.ok && o.error.code === 'not_found';
    if (!saved) {
      // No relay took it: the card stays what it was, so no command defaults to a relay it names.
      const failures = outcomes.flatMap((o) => (o.ok ? [] : [o.error]));
      for (const f of failures.slice(1)) ctx.out.warn(mailboxCliError(f).message, f.code);
      throw mailboxCliError(failures[0]!, 'card not published (nothing saved): ');
    }
    const rows = outcomes.map((o) =>
      o.ok
        ? { relay: o.relay, ok: true, status: o.status }
        : relayOnly(o)
          ? { relay: o.relay, ok: true, status: 'no_directory' }
          : { relay: o.relay, ok: false, error: outcomeError(o.error) },
    );
    settle(
      ctx,
      outcomes.map((o) => (o.ok ? o : { ...o, ok: relayOnly(o) })),
    );
    ctx.out.result({ ...cardValue(card), relays: rows }, () => [
      `card of ${didOfKey(card.key)} signed at ${card.ts}`,
      ...rows.map((r) => {
        if (!r.ok) return `  ${r.relay}  failed: ${r.error?.message}`;
        if (r.status === 'no_directory')
          return `  ${r.relay}  relay-only (no directory): share your card with: wmp card show --json`;
        return `  ${r.relay}  ${r.status === 'stored' ? 'published' : 'already there'}`;
      }),
    ]);
  },
};

const show: CommandSpec = {
  path: ['card', 'show'],
  summary: "show your card, or look up someone's card",
  description: [
    'Without <did>: your own card. With <did>: the card from the --relay directories, else the one',
    'stored in the home, else from the directories of the relays on your card; it is stored in the',
    'home, so mail to that person needs no lookup next time. --json prints the signed card itself',
    '(what wmp card import takes).',
  ],
  args: [{ name: 'did', kind: 'did', optional: true, help: 'whose card (did:key:z6Mk... or z6Mk...)' }],
  options: { relay: { ...boxRelayOption, help: 'look the card up at this relay directory' } },
  examples: [
    'wmp card show',
    'wmp card show did:key:z6Mk... --relay http://127.0.0.1:8080',
    'wmp --json card show > my-card.json',
  ],
  async run(ctx) {
    const mailbox = await openMailbox(ctx);
    const did = ctx.args.did as string | undefined;
    let card: Card | undefined;
    if (did === undefined || did === mailbox.identity.did) {
      card = await mailbox.card();
      if (!card) throw new NotFoundError('you have no card yet', 'Publish one: wmp card publish --relay <url>');
    } else {
      card = await findCard(ctx, mailbox, did, relaysOf(ctx) !== undefined);
    }
    ctx.out.result(card, () => cardLines(card));
  },
};

const importCard: CommandSpec = {
  path: ['card', 'import'],
  summary: "store someone's card from a file (for relays without a directory)",
  description: ['The file is what they printed with: wmp --json card show. The card is verified first.'],
  args: [{ name: 'file', kind: 'path', help: 'the card JSON, or - for standard input' }],
  examples: ['wmp card import bob-card.json', 'ssh bob wmp --json card show | wmp card import -'],
  async run(ctx: CommandContext) {
    const file = ctx.args.file as string;
    let text: string;
    try {
      text = file === '-' ? await readStdin(ctx.stdin) : await readFile(file, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT')
        throw new NotFoundError(`no file ${file}`, 'Give the file written by: wmp --json card show');
      if (error instanceof CliError) throw error;
      throw new CliError(`cannot read ${file} (${code ?? 'error'})`, 'Check the path and permissions.');
    }
    const verdict = verifyCardJson(text);
    if (!verdict.ok) {
      throw new CliError(
        `${file} is not a valid signed card (${verdict.reason})`,
        'Use the unchanged output of: wmp --json card show',
      );
    }
    await saveContactCard(ctx.home, verdict.card);
    ctx.out.result(cardValue(verdict.card), () => [
      `stored the card of ${didOfKey(verdict.card.key)}`,
      ...cardLines(verdict.card),
    ]);
  },
};

export const cardCommands: GroupSpec = {
  name: 'card',
  summary: 'cards: publish yours, look up and import others',
  commands: [publish, show, importCard],
};
