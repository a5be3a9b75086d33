// Splits a REPL line into words like a small shell: whitespace separates, '...' and "..." quote,
// a backslash escapes the next character (outside single quotes).
import { UsageError } from '../errors.js';

export function splitWords(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (quote) {
      if (ch === quote) quote = undefined;
      else if (ch === '\\' && quote === '"' && i + 1 < line.length) word += line[++i];
      else word += ch;
      continue;
    }
    if (ch === '"' || ch === "'") {
      quote = ch;
      inWord = true;
    } else if (ch === '\\' && i + 1 < line.length) {
      word += line[++i];
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += ch;
      inWord = true;
    }
  }
  if (quote)
    throw new UsageError(`unclosed ${quote} quote`, undefined, 'Close the quote, or escape it with a backslash.');
  if (inWord) words.push(word);
  return words;
}
