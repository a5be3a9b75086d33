import { type CardVerdict, verifyCard } from '@wmp/ohan-seal';

/** A card as JSON text, parsed and verified in one step (text that is not JSON is not a card). */
export function verifyCardJson(text: string): CardVerdict {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  return verifyCard(value);
}
