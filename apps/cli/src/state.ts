// The CLI's own state in the home's store, beside the SDK's: the cards of people you looked up or
// wrote to, so mail to them needs no directory lookup next time. (Your own card is the SDK
// Mailbox's, under its own key.) Cards are verified when read back: an edited file is noticed.
import type { Card } from '@wmp/client-sdk';
import { isNewerCard } from '@wmp/ohan-seal';
import { verifyCardJson } from './card-json.js';
import { CliError } from './errors.js';
import type { Home } from './home.js';

/** Store keys of contacts' cards: this prefix + the Ed25519 Multikey (the SDK never writes under `cli/`). */
export const CONTACT_PREFIX = 'cli/contact/';

/** A contact's card by Ed25519 Multikey, or `undefined`. */
export async function loadContactCard(home: Home, key: string): Promise<Card | undefined> {
  const text = await home.store().get(CONTACT_PREFIX + key);
  if (text === undefined) return undefined;
  const verdict = verifyCardJson(text);
  if (!verdict.ok || verdict.card.key !== key) {
    throw new CliError(
      `the stored card of ${key} in ${home.dir} is damaged`,
      'Look it up again: wmp card show <did> --relay <url>',
    );
  }
  return verdict.card;
}

/** Keeps a contact's card unless the stored one is newer. */
export async function saveContactCard(home: Home, card: Card): Promise<void> {
  const current = await loadContactCard(home, card.key).catch(() => undefined);
  if (current && !isNewerCard(card, current)) return;
  await home.store().set(CONTACT_PREFIX + card.key, JSON.stringify(card));
}
