// The package READMEs' examples as a user of the npm packages runs them: every package packed as
// it would be published (its JavaScript built from the sources; declarations left out, which
// running an example does not need), installed from the tarballs into a project outside the
// workspace together with what the READMEs' `npm install` lines name (and tsx), at the lockfile's
// versions from the pnpm store; each example copied there beside what its README says to put beside it.
//   node scripts/packed-examples.mjs DIR     prepares DIR/project; prints the examples as JSON
import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
/** Files an example reads that its README says to put beside it (relative to the package's examples/). */
const BESIDE = ['local-relays.ts', 'fixtures'];

function pnpm(args, cwd) {
  const bin = existsSync(join(ROOT, '.tools/bin/pnpm')) ? join(ROOT, '.tools/bin/pnpm') : 'pnpm';
  return execFileSync(bin, args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, CI: 'true' },
  });
}

/** The packages of the workspace: dir, manifest. */
export function packages() {
  return readdirSync(join(ROOT, 'packages'))
    .filter((dir) => existsSync(join(ROOT, 'packages', dir, 'package.json')))
    .map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(ROOT, 'packages', dir, 'package.json'), 'utf8')) }));
}

/** The words of a README's `npm install ...` lines (package names, perhaps with a version). */
export function installLine(readme) {
  return [...readme.matchAll(/^npm install (.+)$/gm)].flatMap((m) => m[1].replace(/#.*$/, '').trim().split(/\s+/));
}

/** The examples a README embeds verbatim, by file name. */
export function embeddedExamples(dir) {
  const examples = join(ROOT, 'packages', dir, 'examples');
  if (!existsSync(examples)) return [];
  const readme = readFileSync(join(ROOT, 'packages', dir, 'README.md'), 'utf8');
  return readdirSync(examples)
    .filter((file) => file.endsWith('.ts'))
    .filter((file) => readme.includes(`\n\`\`\`ts\n${readFileSync(join(examples, file), 'utf8')}\`\`\`\n`));
}

/** The package a bare import names (`@scope/name/sub` -> `@scope/name`). */
export function packageOf(specifier) {
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
  // An install line may pin a version (`name@1.2.3`): the package is the name before it.
  const at = name.indexOf('@', 1);
  return at < 0 ? name : name.slice(0, at);
}

/** The bare imports of a file (not `node:` builtins, not relative). */
export function bareImports(code) {
  return [...new Set([...code.matchAll(/^(?:import|export)\s[^'"]*?from\s+'([^'.][^']*)'/gm)].map((m) => m[1]))]
    .filter((s) => !s.startsWith('node:'))
    .map(packageOf);
}

/** The version the workspace pins for a dependency (any package.json that names it). */
function pinned(name) {
  for (const manifest of [
    JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')),
    ...packages().map((p) => p.manifest),
  ]) {
    for (const field of ['dependencies', 'devDependencies', 'peerDependencies']) {
      const version = manifest[field]?.[name];
      if (version !== undefined && !version.startsWith('workspace:')) return version.replace(/^\^/, '');
    }
  }
  throw new Error(`packed-examples: no version of ${name} in the workspace`);
}

// The versions the workspace's lockfile resolved, for every package it holds at one version only.
// Pinning them keeps the packed project on what the workspace tests (and in the pnpm store): left
// to resolve ranges, pnpm may pick a release the store lacks (CI met string_decoder 1.4.0).
function lockedVersions() {
  const lock = readFileSync(join(ROOT, 'pnpm-lock.yaml'), 'utf8').split(/^---$/m).at(-1);
  const section = lock.slice(lock.indexOf('\npackages:\n'), lock.indexOf('\nsnapshots:\n'));
  const versions = new Map();
  for (const [, name, version] of section.matchAll(/^ {2}'?((?:@[^@/\s]+\/)?[^@\s']+)@([^'(:\s]+)'?:$/gm))
    versions.set(name, (versions.get(name) ?? new Set()).add(version));
  return [...versions].filter(([, set]) => set.size === 1).map(([name, set]) => [name, [...set][0]]);
}

/** Builds, packs and installs; returns the project directory and the examples copied into it. */
export function prepare(work) {
  const ws = join(work, 'ws');
  const tarballs = join(work, 'tarballs');
  const project = join(work, 'project');
  mkdirSync(ws, { recursive: true });
  mkdirSync(tarballs, { recursive: true });
  mkdirSync(project, { recursive: true });
  const tarballOf = {};
  const versions = Object.fromEntries(packages().map(({ manifest }) => [manifest.name, manifest.version]));
  for (const { dir, manifest } of packages()) {
    const out = join(ws, 'packages', dir);
    execFileSync(
      join(ROOT, 'node_modules/.bin/tsup'),
      ['--no-dts', '--no-sourcemap', '--silent', '--out-dir', join(out, 'dist')],
      {
        cwd: join(ROOT, 'packages', dir),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    for (const file of ['README.md', 'LICENSE']) {
      if (existsSync(join(ROOT, 'packages', dir, file)))
        copyFileSync(join(ROOT, 'packages', dir, file), join(out, file));
    }
    // As publishing does: `workspace:*` becomes the exact version of that package.
    const published = structuredClone(manifest);
    for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies']) {
      for (const [name, range] of Object.entries(published[field] ?? {})) {
        if (String(range).startsWith('workspace:')) published[field][name] = versions[name];
      }
    }
    delete published.devDependencies;
    writeFileSync(join(out, 'package.json'), `${JSON.stringify(published, null, 2)}\n`);
    execFileSync('npm', ['pack', '--silent', '--pack-destination', tarballs], {
      cwd: out,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const file = readdirSync(tarballs).find((f) =>
      f.startsWith(`${manifest.name.replace('@', '').replace('/', '-')}-${manifest.version}`),
    );
    tarballOf[manifest.name] = `file:${join(tarballs, file)}`;
  }
  // What the READMEs tell a user to install, the packages from the tarballs; and tsx to run .ts.
  const names = new Set(['tsx']);
  for (const { dir } of packages())
    for (const word of installLine(readFileSync(join(ROOT, 'packages', dir, 'README.md'), 'utf8')))
      names.add(packageOf(word));
  const dependencies = Object.fromEntries([...names].sort().map((name) => [name, tarballOf[name] ?? pinned(name)]));
  writeFileSync(
    join(project, 'package.json'),
    `${JSON.stringify({ name: 'readme-examples', private: true, type: 'module', dependencies }, null, 2)}\n`,
  );
  // pnpm's settings: every @wmp/* (and their @wmp/* dependencies) from the tarballs, everything
  // else at the workspace's locked version where it has one; the native addon built.
  const locked = lockedVersions().filter(([name]) => !(name in tarballOf));
  writeFileSync(
    join(project, 'pnpm-workspace.yaml'),
    [
      'overrides:',
      ...Object.entries(tarballOf).map(([name, spec]) => `  "${name}": "${spec}"`),
      ...locked.map(([name, version]) => `  "${name}": "${version}"`),
      'allowBuilds:',
      '  better-sqlite3: true',
      '  esbuild: true',
      'peerDependencyRules:',
      '  allowedVersions:',
      '    ts-mls>@noble/ciphers: "2"',
      '    ts-mls>@noble/curves: "2"',
      '',
    ].join('\n'),
  );
  // From the store; the registry only for what it lacks (a package the lockfile holds twice).
  pnpm(['install', '--prefer-offline', '--reporter=silent'], project);
  const examples = [];
  for (const { dir } of packages()) {
    const from = join(ROOT, 'packages', dir, 'examples');
    const to = join(project, dir);
    for (const file of embeddedExamples(dir)) {
      mkdirSync(to, { recursive: true });
      copyFileSync(join(from, file), join(to, file));
      examples.push({ dir, file, path: join(to, file) });
    }
    for (const extra of BESIDE)
      if (existsSync(join(from, extra)))
        cpSync(join(from, extra), join(to, extra), { recursive: true, dereference: true });
  }
  return { project, examples };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const work = resolve(process.argv[2] ?? '.packed-examples');
  console.log(JSON.stringify(prepare(work), null, 2));
}
