// The single list of test projects. Vitest 4 no longer reads this file by itself
// (workspace files were replaced by `test.projects`); vitest.config.ts imports it.
//
// One project per workspace member. A member whose package.json maps `#crypto` (a node:crypto
// fast path under the `node` condition, a portable noble path otherwise) gets a second
// "(portable)" project in which `#crypto` resolves to the portable entry of that map, so both
// crypto paths run the same tests.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultServerConditions, type Plugin } from 'vite';
import type { TestProjectInlineConfiguration } from 'vitest/config';

const groups = ['packages', 'apps'] as const;

interface CryptoImportMap {
  '@wmp/source': { node: string; default: string };
}

function cryptoMap(pkgDir: string): CryptoImportMap | undefined {
  const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as {
    imports?: Record<string, CryptoImportMap>;
  };
  return pkg.imports?.['#crypto'];
}

function packageDirOf(file: string): string {
  let dir = dirname(file);
  while (!existsSync(join(dir, 'package.json'))) dir = dirname(dir);
  return dir;
}

/** Resolves `#crypto` to the non-`node` branch of the importing package's own import map. */
function portableCrypto(): Plugin {
  return {
    name: 'wmp-portable-crypto',
    enforce: 'pre',
    resolveId(id, importer) {
      if (id !== '#crypto' || !importer) return null;
      const pkgDir = packageDirOf(importer);
      const map = cryptoMap(pkgDir);
      return map ? join(pkgDir, map['@wmp/source'].default) : null;
    },
  };
}

// Tests run in Vite's SSR environment: workspace packages resolve to their TypeScript source
// through the "@wmp/source" export condition, so tests never need a build.
const ssr = { resolve: { conditions: ['@wmp/source', ...defaultServerConditions] } };

// `npm run test:quick` (WMP_TEST_QUICK=1): the unit and in-process tests only, for the run a
// developer makes often. Left out, by file name: the apps (each of
// their tests starts processes); tests of real PostgreSQL and Redis servers (`*postgres*`,
// `*redis*`: a file that starts one says so in its name); crash tests (processes killed on
// purpose); examples run as a reader runs them (`*example*`: a README's example under tsx in a
// child process, scripts/packed-examples.test.ts from packed tarballs: the slowest files of the
// quick run, mostly compiling in the child); the browser test, the services harness, and the
// second run of the crypto packages on their portable implementation. `npm test` runs everything.
const quick = process.env.WMP_TEST_QUICK === '1';
const QUICK_EXCLUDE = [
  '**/*postgres*.test.ts',
  '**/*redis*.test.ts',
  '**/*crash*.test.ts',
  '**/*example*.test.ts',
  '**/browser.test.ts',
  'test-support/services/**',
];
const quickGroups = ['packages'] as const;

// The run's shared PostgreSQL server (test-support/services/global-setup.ts; `testDatabase()` in
// tests): started once, only when a project listed here runs. Add a project's name to use it.
const sharedPostgres = new Set<string>(['test-support', 'packages/relay-server']);
const sharedPostgresSetup = fileURLToPath(new URL('./test-support/services/global-setup.ts', import.meta.url));
const globalSetupOf = (name: string) =>
  sharedPostgres.has(name) && !quick ? { globalSetup: [sharedPostgresSetup] } : {};
const excludeOf = () => (quick ? { exclude: [...QUICK_EXCLUDE, '**/node_modules/**'] } : {});

// Tests that run a dozen processes one after another (the CLI's: each step is a `wmp` process)
// get more time than the default 20 s: on a busy shared machine each start costs a second or two.
const slowProjects: Readonly<Record<string, number>> = { 'apps/cli': 60_000, 'apps/relay': 60_000 };
const timeoutOf = (name: string) => (slowProjects[name] === undefined ? {} : { testTimeout: slowProjects[name] });

// The repository's own test support: the throwaway PostgreSQL/Redis harness, scripts/ and the
// bench tools (never the benchmarks themselves: those run only under `npm run bench`).
const testSupport: TestProjectInlineConfiguration = {
  extends: true,
  ssr,
  test: {
    name: 'test-support',
    root: fileURLToPath(new URL('./', import.meta.url)),
    include: ['test-support/**/*.test.ts', 'scripts/**/*.test.ts', 'bench/**/*.test.ts'],
    ...excludeOf(),
    ...globalSetupOf('test-support'),
  },
};

const packageProjects: TestProjectInlineConfiguration[] = (quick ? quickGroups : groups).flatMap((group) =>
  readdirSync(new URL(`./${group}/`, import.meta.url), { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(new URL(`./${group}/${d.name}/package.json`, import.meta.url)))
    .flatMap((d): TestProjectInlineConfiguration[] => {
      const name = `${group}/${d.name}`;
      const root = fileURLToPath(new URL(`./${group}/${d.name}/`, import.meta.url));
      const include = ['test/**/*.test.ts', 'src/**/*.test.ts'];
      const setup = { ...globalSetupOf(name), ...timeoutOf(name), ...excludeOf() };
      if (!cryptoMap(root)) return [{ extends: true, ssr, test: { name, root, include, ...setup } }];
      const onNode: TestProjectInlineConfiguration = {
        extends: true,
        ssr,
        test: { name, root, include, ...setup, env: { WMP_CRYPTO_PATH: 'node' } },
      };
      // The quick run tests the crypto packages once, on node:crypto; `npm test` adds the portable run.
      if (quick) return [onNode];
      return [
        onNode,
        {
          extends: true,
          ssr,
          plugins: [portableCrypto()],
          test: { name: `${name} (portable)`, root, include, ...setup, env: { WMP_CRYPTO_PATH: 'portable' } },
        },
      ];
    }),
);

export const projects: TestProjectInlineConfiguration[] = [...packageProjects, testSupport];

export default projects;
