// `--config FILE`: the relay's settings in a JSON or TOML file, keys spelled as the flags without
// their dashes in front (`data-dir`, `public-url`, `max-message-bytes`). Pure: the caller reads the
// file. TOML is read as the flat table a settings file is (key = value lines, comments, strings,
// integers, booleans, arrays); tables and dotted keys are refused, since no setting has them.
import type { OptionSpec } from './config-spec.js';
import { ConfigError } from './config-values.js';

export type FileValue = string | number | boolean | readonly (string | number)[];
export type FileSettings = Readonly<Record<string, FileValue>>;

function fail(name: string, line: number | undefined, why: string): never {
  throw new ConfigError(`--config ${name}${line === undefined ? '' : `:${line}`}: ${why}`);
}

/** A JSON file's settings: one object of strings, numbers, booleans and arrays of strings or numbers. */
function parseJson(text: string, name: string): FileSettings {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    fail(name, undefined, 'not valid JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) fail(name, undefined, 'not a JSON object');
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    const scalar = (x: unknown) => typeof x === 'string' || (typeof x === 'number' && Number.isFinite(x));
    if (!(scalar(v) || typeof v === 'boolean' || (Array.isArray(v) && v.every(scalar)))) {
      fail(name, undefined, `${key}: a value is a string, a number, true/false or a list of strings`);
    }
  }
  return value as FileSettings;
}

const BARE_KEY = /^[A-Za-z0-9_-]+$/;
const ESCAPES: Readonly<Record<string, string>> = { b: '\b', t: '\t', n: '\n', f: '\f', r: '\r', '"': '"', '\\': '\\' };

/** Reads one TOML value at the start of `s`; returns it and what is left. */
function tomlValue(s: string, fail: (why: string) => never): [FileValue, string] {
  if (s.startsWith('"')) {
    let out = '';
    for (let i = 1; i < s.length; i++) {
      const c = s[i]!;
      if (c === '"') return [out, s.slice(i + 1)];
      if (c !== '\\') {
        out += c;
        continue;
      }
      const e = s[++i];
      if (e === 'u' || e === 'U') {
        const n = e === 'u' ? 4 : 8;
        const hex = s.slice(i + 1, i + 1 + n);
        if (!/^[0-9A-Fa-f]+$/.test(hex) || hex.length !== n) fail('a bad \\u escape');
        out += String.fromCodePoint(Number.parseInt(hex, 16));
        i += n;
      } else if (e !== undefined && ESCAPES[e] !== undefined) out += ESCAPES[e];
      else fail('a bad escape in a string');
    }
    fail('a string without its closing quote');
  }
  if (s.startsWith("'")) {
    const end = s.indexOf("'", 1);
    if (end === -1) fail('a string without its closing quote');
    return [s.slice(1, end), s.slice(end + 1)];
  }
  if (s.startsWith('[')) {
    const items: (string | number)[] = [];
    let rest = s.slice(1).trimStart();
    while (!rest.startsWith(']')) {
      const [item, after] = tomlValue(rest, fail);
      if (typeof item !== 'string' && typeof item !== 'number') fail('a list holds strings or numbers');
      items.push(item);
      rest = after.trimStart();
      if (rest.startsWith(',')) rest = rest.slice(1).trimStart();
      else if (!rest.startsWith(']')) fail('a list needs commas between its values');
    }
    return [items, rest.slice(1)];
  }
  const word = /^[^\s,\]#]+/.exec(s)?.[0];
  if (word === 'true' || word === 'false') return [word === 'true', s.slice(word.length)];
  if (word !== undefined && /^[+-]?\d[\d_]*$/.test(word)) return [Number(word.replace(/_/g, '')), s.slice(word.length)];
  fail('a value is a "string", an integer, true/false or a [list]');
}

/** The key = value lines of a flat TOML file; multi-line arrays are joined first. */
function parseToml(text: string, name: string): FileSettings {
  const settings: Record<string, FileValue> = {};
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const at = i + 1;
    const failHere = (why: string): never => fail(name, at, why);
    const line = lines[i]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    if (line.startsWith('[')) failHere('tables are not settings: keys are flags without their dashes, at the top');
    const eq = line.indexOf('=');
    if (eq === -1) failHere('not a key = value line');
    let key = line.slice(0, eq).trim();
    if (/^".*"$/.test(key)) key = key.slice(1, -1);
    if (!BARE_KEY.test(key)) failHere(`"${key}" is not a setting name (dotted keys are not settings)`);
    // An array may go on over lines until its closing bracket.
    let rest = withoutComment(line.slice(eq + 1)).trim();
    while (rest.startsWith('[') && !closes(rest) && i + 1 < lines.length) rest += ` ${withoutComment(lines[++i]!)}`;
    const [value, after] = tomlValue(rest, failHere);
    const tail = after.trim();
    if (tail !== '' && !tail.startsWith('#')) failHere('something after the value');
    if (Object.hasOwn(settings, key)) failHere(`${key} is set twice`);
    settings[key] = value;
  }
  return settings;
}

/** A line without its `# comment` (a `#` inside a string stays). */
function withoutComment(line: string): string {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote !== undefined) {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '#') return line.slice(0, i);
  }
  return line;
}

/** Whether an array's text holds its closing bracket outside strings. */
function closes(text: string): boolean {
  let depth = 0;
  let quote: string | undefined;
  for (const c of text) {
    if (quote !== undefined) {
      if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '[') depth++;
    else if (c === ']' && --depth === 0) return true;
  }
  return false;
}

/** The settings of a config file: JSON when its name ends in .json or its text starts with `{`, else TOML. */
export function parseConfigFile(text: string, name: string): FileSettings {
  return name.endsWith('.json') || text.trimStart().startsWith('{') ? parseJson(text, name) : parseToml(text, name);
}

/**
 * The file's settings as the environment variables they stand for (the layer under the real
 * environment), and which variable each key became (for error messages). `directory` and
 * `relay-only` are the two values of WMP_BOX_MODE; a key that is no flag is refused.
 */
export function settingsAsEnv(
  settings: FileSettings,
  name: string,
  specs: readonly OptionSpec[],
  envOf: (spec: OptionSpec) => string | undefined,
): { env: Record<string, string>; keys: Map<string, string> } {
  const env: Record<string, string> = {};
  const keys = new Map<string, string>();
  for (const [key, value] of Object.entries(settings)) {
    const spec = specs.find((s) => s.flag === key);
    if (spec === undefined || key === 'config') fail(name, undefined, `${key}: not a setting (see wmp-relay --help)`);
    if (spec.kind === 'bool' && typeof value !== 'boolean') fail(name, undefined, `${key}: true or false`);
    if (spec.kind !== 'list' && Array.isArray(value)) fail(name, undefined, `${key}: one value, not a list`);
    const variable = envOf(spec);
    if (variable === undefined) {
      // --directory / --relay-only: WMP_BOX_MODE.
      if (value !== true) continue;
      if (env.WMP_BOX_MODE !== undefined) fail(name, undefined, 'directory and relay-only exclude each other');
      env.WMP_BOX_MODE = key;
      keys.set('WMP_BOX_MODE', key);
      continue;
    }
    env[variable] = Array.isArray(value) ? value.join(',') : String(value);
    keys.set(variable, key);
  }
  return { env, keys };
}
