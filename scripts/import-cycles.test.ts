import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { removeDir } from '../test-support/services/common.js';
import {
  cycles,
  importGraph,
  RELAY_DIR,
  RELAY_ROOMS,
  relativeImports,
  relayRoomViolations,
  repositoryCycles,
  roomOrderViolations,
  sourceFiles,
} from './import-cycles.js';

const root = fileURLToPath(new URL('../', import.meta.url));

describe('import cycles', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) removeDir(dir);
  });

  it('no source file of a package or app takes part in an import cycle', () => {
    expect(repositoryCycles(root)).toEqual([]);
  });

  it('reads static, multi-line, type-only, re-export and dynamic imports, and no package import', () => {
    const text = [
      "import { a } from './a.js';",
      'import {\n  b,\n  type c,\n} from "../b.js";',
      "import type { D } from './d.js';",
      "export * from './e.js';",
      "export { f } from './f.js';",
      "const g = await import('./g.js');",
      "import { h } from '@wmp/session';",
      "import './side-effect.js';",
    ].join('\n');
    expect(relativeImports(text).sort()).toEqual(
      ['./a.js', '../b.js', './d.js', './e.js', './f.js', './side-effect.js', './g.js'].sort(),
    );
  });

  it('finds a planted cycle through a type-only import and an index file, and not a chain', () => {
    const dir = mkdtempSync(join(tmpdir(), 'wmp-cycles-'));
    dirs.push(dir);
    mkdirSync(join(dir, 'sub'));
    writeFileSync(join(dir, 'a.ts'), "import { b } from './b.js';\nexport const a = b;\n");
    writeFileSync(join(dir, 'b.ts'), "import type { C } from './sub/index.js';\nexport const b = 1 as C;\n");
    writeFileSync(join(dir, 'sub', 'index.ts'), "import { a } from '../a.js';\nexport type C = typeof a;\n");
    writeFileSync(join(dir, 'leaf.ts'), "import { a } from './a.js';\nexport const leaf = a;\n");
    writeFileSync(join(dir, 'leaf.test.ts'), "import { leaf } from './leaf.js';\nimport './leaf.test.js';\n");
    const files = sourceFiles(dir);
    expect(files.map((f) => f.slice(dir.length + 1))).toEqual(['a.ts', 'b.ts', 'leaf.ts', 'sub/index.ts']);
    const found = cycles(importGraph(files));
    expect(found.map((c) => c.map((f) => f.slice(dir.length + 1)))).toEqual([['a.ts', 'b.ts', 'sub/index.ts']]);
  });

  it('a file that imports itself is a cycle', () => {
    expect(cycles(new Map([['x', ['x']]]))).toEqual([['x']]);
    expect(
      cycles(
        new Map([
          ['x', ['y']],
          ['y', []],
        ]),
      ),
    ).toEqual([]);
  });
});

describe("the order of the relay's rooms", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) removeDir(dir);
  });

  /** A directory of rooms `low` < `high` with `files` (path -> text), and what breaks their order. */
  function plant(files: Record<string, string>) {
    const dir = mkdtempSync(join(tmpdir(), 'wmp-rooms-'));
    dirs.push(dir);
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(dir, path, '..'), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    return roomOrderViolations(importGraph(sourceFiles(dir)), dir, ['low', 'high']).map(
      (v) => `${v.kind} ${v.from} -> ${v.to}`,
    );
  }

  it("no import of the repository's relay runs back up the rooms, into the root, or in a circle", () => {
    expect(relayRoomViolations(root)).toEqual([]);
  });

  it('names every room of the relay, each a directory there', () => {
    const present = readdirSync(join(root, RELAY_DIR), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
    expect([...present].sort()).toEqual([...RELAY_ROOMS].sort());
  });

  it('docs/architecture.md lists the rooms in their order, lowest first', () => {
    const text = readFileSync(join(root, 'docs/architecture.md'), 'utf8');
    const start = text.indexOf('| room, lowest first |');
    const table = text.slice(start, text.indexOf('\n\n', start));
    const listed = [...table.matchAll(/^\| `([a-z-]+)\/` \|/gm)].map((m) => m[1]);
    expect(listed).toEqual([...RELAY_ROOMS]);
  });

  it('takes imports down the rooms, inside a room and from the root', () => {
    expect(
      plant({
        'low/a.ts': 'export const a = 1;\n',
        'low/b.ts': "import { a } from './a.js';\nexport const b = a;\n",
        'high/c.ts': "import { b } from '../low/b.js';\nexport const c = b;\n",
        'high/deep/d.ts': "import type { c } from '../c.js';\nexport type D = typeof c;\n",
        'core.ts': "import { c } from './high/c.js';\nimport { a } from './low/a.js';\nexport const core = [a, c];\n",
      }),
    ).toEqual([]);
  });

  it('finds a planted upward import, a type-only one too, an import of the root and an unlisted room', () => {
    expect(
      plant({
        'low/a.ts': "import { c } from '../high/c.js';\nexport const a = c;\n",
        'low/b.ts': "import type { D } from '../high/deep/d.js';\nexport type B = D;\n",
        'high/c.ts': 'export const c = 1;\n',
        'high/deep/d.ts': "import { core } from '../../core.js';\nexport type D = typeof core;\n",
        'core.ts': 'export const core = 1;\n',
        'attic/e.ts': "import { c } from '../high/c.js';\nexport const e = c;\n",
      }).sort(),
    ).toEqual(
      [
        'upward low/a.ts -> high/c.ts',
        'upward low/b.ts -> high/deep/d.ts',
        'into-root high/deep/d.ts -> core.ts',
        'unlisted-room attic/e.ts -> ',
        'upward attic/e.ts -> high/c.ts',
      ].sort(),
    );
  });

  it('finds a circle inside one room', () => {
    expect(
      plant({
        'low/a.ts': "import { b } from './b.js';\nexport const a = b;\n",
        'low/b.ts': "import type { a } from './a.js';\nexport const b = 1 as unknown as typeof a;\n",
      }),
    ).toEqual(['cycle low/a.ts low/b.ts -> ']);
  });
});
