// The structure check: relative imports between the source files of the packages and apps, and
// the cycles among them. Type-only imports count too (a type cycle is the same tangle for a reader,
// and the next edit often turns it into a value import). Package imports (`@wmp/...`) are the
// layering docs/architecture.md, "Packages" draws and are left to TypeScript's project references
// and the package graph.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** Every `.ts` file under `dir`, tests and declaration files left out. */
export function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'dist') out.push(...sourceFiles(path));
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.endsWith('.d.ts')) {
      out.push(path);
    }
  }
  return out.sort();
}

const SPECIFIER = /(?:^|[\s;])(?:import|export)\s(?:[^'";]*?\sfrom\s)?['"](\.{1,2}\/[^'"]+)['"]/g;
const DYNAMIC = /import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

/** The relative specifiers a file imports or re-exports (static and dynamic). */
export function relativeImports(text: string): string[] {
  const found: string[] = [];
  for (const re of [SPECIFIER, DYNAMIC]) for (const m of text.matchAll(re)) found.push(m[1] as string);
  return found;
}

function resolveSpecifier(from: string, specifier: string): string | undefined {
  const base = resolve(dirname(from), specifier);
  const candidates = [base.replace(/\.js$/, '.ts'), base, `${base}.ts`, join(base, 'index.ts')];
  return candidates.find((c) => {
    try {
      return statSync(c).isFile();
    } catch {
      return false;
    }
  });
}

/** file -> the files it imports, for the given files only. */
export function importGraph(files: readonly string[]): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets = relativeImports(readFileSync(file, 'utf8'))
      .map((s) => resolveSpecifier(file, s))
      .filter((t): t is string => t !== undefined && known.has(t));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** The strongly connected components of more than one file, or a file importing itself (Tarjan). */
export function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next++;
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || graph.get(node)?.includes(node)) found.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

/** The import cycles of every package's and app's `src/`, as paths relative to `root`. */
export function repositoryCycles(root: string): string[][] {
  const files = ['packages', 'apps'].flatMap((group) =>
    readdirSync(join(root, group), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .flatMap((d) => {
        const src = join(root, group, d.name, 'src');
        try {
          return statSync(src).isDirectory() ? sourceFiles(src) : [];
        } catch {
          return [];
        }
      }),
  );
  return cycles(importGraph(files)).map((c) => c.map((f) => relative(root, f)));
}

/**
 * The relay's floor plan (docs/architecture.md, "Relay"): the rooms of
 * `packages/relay-server/src/relay/`, lowest first. A room imports from itself and the rooms
 * before it only; the root files (`relay/*.ts`: the assembly) may import any room, and no room
 * imports them. A new directory there is a room only once it is listed here.
 */
export const RELAY_DIR = 'packages/relay-server/src/relay';
export const RELAY_ROOMS = [
  'support',
  'presence',
  'routing',
  'statuses',
  'evidence',
  'federation',
  'mls',
  'sessions',
  'http',
] as const;

/** One import that breaks the order of the rooms, or a cycle among files of the directory. */
export interface RoomViolation {
  readonly kind: 'upward' | 'into-root' | 'unlisted-room' | 'cycle';
  /** The importing file (a cycle: its files), relative to the checked directory. */
  readonly from: string;
  /** The imported file (a cycle: empty). */
  readonly to: string;
}

/** The room of a file of `dir`: its first directory (`''`: a root file), or undefined outside `dir`. */
function roomOf(dir: string, file: string): string | undefined {
  const path = relative(dir, file);
  if (path.startsWith('..')) return undefined;
  const parts = path.split(/[\\/]/);
  return parts.length === 1 ? '' : parts[0];
}

/** What breaks the order of `rooms` (lowest first) among the files of `dir` in `graph`. */
export function roomOrderViolations(
  graph: ReadonlyMap<string, readonly string[]>,
  dir: string,
  rooms: readonly string[],
): RoomViolation[] {
  const found: RoomViolation[] = [];
  const name = (file: string) => relative(dir, file).split('\\').join('/');
  const inside = new Map<string, string[]>();
  for (const [from, targets] of graph) {
    const room = roomOf(dir, from);
    if (room === undefined) continue;
    inside.set(
      from,
      targets.filter((t) => roomOf(dir, t) !== undefined),
    );
    if (room !== '' && !rooms.includes(room)) found.push({ kind: 'unlisted-room', from: name(from), to: '' });
    for (const to of inside.get(from)!) {
      const target = roomOf(dir, to)!;
      if (room === '' || target === room) continue;
      if (target === '') found.push({ kind: 'into-root', from: name(from), to: name(to) });
      else if (rooms.indexOf(target) > rooms.indexOf(room) || !rooms.includes(target)) {
        found.push({ kind: 'upward', from: name(from), to: name(to) });
      }
    }
  }
  for (const cycle of cycles(inside)) found.push({ kind: 'cycle', from: cycle.map(name).join(' '), to: '' });
  return found;
}

/** The room-order check of the repository's relay (`RELAY_DIR`, `RELAY_ROOMS`). */
export function relayRoomViolations(root: string): RoomViolation[] {
  const dir = join(root, RELAY_DIR);
  return roomOrderViolations(importGraph(sourceFiles(dir)), dir, RELAY_ROOMS);
}
