// The REPL's history file in the home: one command per line, oldest first, at most
// HISTORY_LINES lines, mode 0600, replaced atomically (temporary file + rename).
import { randomBytes } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';

/** Lines kept in the history file (and in memory). */
export const HISTORY_LINES = 500;
/** A longer line is not kept (a pasted document is no command to recall). */
export const MAX_HISTORY_LINE = 4096;

/** The saved history, newest first (as node:readline's `history` option wants it). */
export async function loadHistory(file: string, max = HISTORY_LINES): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return text
    .split('\n')
    .filter((l) => l.trim() !== '' && l.length <= MAX_HISTORY_LINE)
    .slice(-max)
    .reverse();
}

/** Writes `newestFirst` (readline's order) as the history file, oldest first, bounded. */
export async function saveHistory(file: string, newestFirst: readonly string[], max = HISTORY_LINES): Promise<void> {
  const lines = newestFirst
    .filter((l) => l.trim() !== '' && l.length <= MAX_HISTORY_LINE && !l.includes('\n'))
    .slice(0, max)
    .reverse();
  const temp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeFile(temp, lines.length ? `${lines.join('\n')}\n` : '', { mode: 0o600, flag: 'wx' });
    await rename(temp, file);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}
