// The single list of test projects. Vitest 4 no longer reads this file by itself
// (workspace files were replaced by `test.projects`); vitest.config.ts imports it.
//
// One project per workspace member. A member whose package.json maps `#crypto`
// (a Node fast path and a portable noble path) gets a second project that resolves
// without the `node` condition, so both crypto paths run the same tests.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { TestProjectInlineConfiguration } from 'vitest/config';

const groups = ['packages', 'apps'] as const;
const portableConditions = ['@wmp/source', 'module', 'browser', 'import', 'default'];

function hasCryptoPaths(pkgJson: URL): boolean {
  const pkg = JSON.parse(readFileSync(pkgJson, 'utf8')) as { imports?: Record<string, unknown> };
  return pkg.imports?.['#crypto'] !== undefined;
}

export const projects: TestProjectInlineConfiguration[] = groups.flatMap((group) =>
  readdirSync(new URL(`./${group}/`, import.meta.url), { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(new URL(`./${group}/${d.name}/package.json`, import.meta.url)))
    .flatMap((d) => {
      const name = `${group}/${d.name}`;
      const root = fileURLToPath(new URL(`./${group}/${d.name}/`, import.meta.url));
      const include = ['test/**/*.test.ts', 'src/**/*.test.ts'];
      const base: TestProjectInlineConfiguration = { extends: true, test: { name, root, include } };
      if (!hasCryptoPaths(new URL(`./${group}/${d.name}/package.json`, import.meta.url))) return [base];
      const portable: TestProjectInlineConfiguration = {
        extends: true,
        ssr: { resolve: { conditions: portableConditions, externalConditions: portableConditions } },
        test: { name: `${name} (portable)`, root, include, env: { WMP_CRYPTO_PATH: 'portable' } },
      };
      return [{ ...base, test: { ...base.test, env: { WMP_CRYPTO_PATH: 'node' } } }, portable];
    }),
);

export default projects;
