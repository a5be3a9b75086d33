import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { removeDir } from '../test-support/services/common.js';
import { cycles, importGraph, relativeImports, repositoryCycles, sourceFiles } from './import-cycles.js';

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
