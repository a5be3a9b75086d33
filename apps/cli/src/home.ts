// The config directory ("home"): where the identity and all state live.
//   <home>/            mode 0700
//   <home>/store/      the SDK's FileStore: identity, card, contacts' cards, mail cursors and
//                      dedupe sets, groups (one file per key, mode 0600)
//   <home>/history     the REPL's command history (last HISTORY_LINES lines, mode 0600)
//   <home>/.gitignore  `*`, when wmp made the directory (else in store/, when it made that)
import { mkdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { type ClientStore, Identity } from '@wmp/client-sdk';
import { FileStore } from '@wmp/client-sdk/node';
import { NotFoundError } from './errors.js';

/** `--home`, else `$WMP_HOME`, else `$XDG_CONFIG_HOME/wmp`, else `~/.config/wmp` (absolute). */
export function resolveHomeDir(flag: string | undefined, env: Readonly<Record<string, string | undefined>>): string {
  const given = flag ?? (env.WMP_HOME || undefined);
  if (given !== undefined) return resolve(given);
  const xdg = env.XDG_CONFIG_HOME;
  // The XDG spec says a relative XDG_CONFIG_HOME is invalid and must be ignored.
  if (xdg && isAbsolute(xdg)) return join(xdg, 'wmp');
  return join(env.HOME || homedir(), '.config', 'wmp');
}

export const HISTORY_FILE = 'history';
export const GITIGNORE_FILE = '.gitignore';

function ignoreInGit(dir: string): void {
  const text = '# Made by wmp: secret keys and state. Never commit them.\n*\n';
  try {
    writeFileSync(join(dir, GITIGNORE_FILE), text, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}
export const STORE_DIR = 'store';

export class Home {
  readonly dir: string;
  #store: ClientStore | undefined;

  constructor(dir: string) {
    this.dir = dir;
  }

  get historyFile(): string {
    return join(this.dir, HISTORY_FILE);
  }

  get storeDir(): string {
    return join(this.dir, STORE_DIR);
  }

  /**
   * The home's store (the directory is made on first use, mode 0700). A directory wmp makes gets
   * a `.gitignore` that ignores everything in it: a home made inside a git checkout (`--home
   * ./alice`) never has its secret keys committed. None is written where wmp made nothing.
   */
  store(): ClientStore {
    if (this.#store === undefined) {
      const madeHome = mkdirSync(this.dir, { recursive: true, mode: 0o700 }) !== undefined;
      const madeStore = mkdirSync(this.storeDir, { recursive: true, mode: 0o700 }) !== undefined;
      if (madeHome || madeStore) ignoreInGit(madeHome ? this.dir : this.storeDir);
      this.#store = new FileStore(this.storeDir);
    }
    return this.#store;
  }

  /** The identity, or `undefined` when this home has none yet. */
  async findIdentity(): Promise<Identity | undefined> {
    return Identity.load(this.store());
  }

  /** The identity; a home without one is a not-found error that says how to make one. */
  async identity(): Promise<Identity> {
    const identity = await this.findIdentity();
    if (identity === undefined) {
      throw new NotFoundError(
        `no identity in ${this.dir}`,
        'Run: wmp keys new   (or point --home / WMP_HOME at the directory that has yours)',
      );
    }
    return identity;
  }
}
