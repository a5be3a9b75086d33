// Reading a small document from standard input (an exported identity), bounded.
import { CliError } from './errors.js';

/** Largest document read from standard input. */
export const MAX_STDIN_BYTES = 64 * 1024;

export async function readStdin(stdin: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stdin) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += buf.length;
    if (size > MAX_STDIN_BYTES) {
      throw new CliError(`standard input is larger than ${MAX_STDIN_BYTES} bytes`, 'Give the exported file itself.');
    }
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString('utf8');
}
