import * as v from 'valibot';
import { InvalidParamsError, MethodNotFoundError } from './errors.js';
import type { MethodSpec } from './schemas/method-spec.js';

/** Why a registration was refused. */
export type MethodRegistryFailure =
  | 'reserved_name'
  | 'invalid_name'
  | 'already_defined'
  | 'invalid_descriptor'
  | 'frozen'
  | 'not_defined';

const REGISTRY_MESSAGES: Readonly<Record<MethodRegistryFailure, string>> = {
  reserved_name: 'wmp.* names are reserved for the protocol (core §9.1)',
  invalid_name: 'a method name is a dotted namespace of letters, digits, "_" and "-"',
  already_defined: 'method already defined',
  invalid_descriptor: 'a method descriptor needs a kind, a params schema and, unless a notification, a result schema',
  not_defined: 'no such method: define it (with its schema) first',
  frozen: 'this registry is shared and takes no definitions: define on a copy (new MethodRegistry(base))',
};

/** A refused method registration: a programming error, never sent on the wire. */
export class MethodRegistryError extends Error {
  readonly code: MethodRegistryFailure;
  constructor(code: MethodRegistryFailure) {
    super(REGISTRY_MESSAGES[code]);
    this.name = 'MethodRegistryError';
    this.code = code;
  }
}

// Namespaced like `org.example.ping` (core §9.1 asks for reverse-domain names).
const METHOD_NAME = /^[A-Za-z][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)+$/;
const MAX_METHOD_NAME = 128;

function describe(issues: readonly v.BaseIssue<unknown>[]): string {
  const issue = issues[0];
  if (!issue) return 'invalid';
  const path = issue.path?.map((p) => String(p.key)).join('.');
  return path ? `${path}: ${issue.message}` : issue.message;
}

function isSchema(value: unknown): boolean {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'schema';
}

function checkDescriptor(spec: MethodSpec): void {
  const kinds = ['request', 'notification', 'either'];
  const resultOk = spec.kind === 'notification' ? spec.result === undefined : isSchema(spec.result);
  if (!kinds.includes(spec.kind) || !isSchema(spec.params) || !resultOk) {
    throw new MethodRegistryError('invalid_descriptor');
  }
}

/**
 * The methods one endpoint knows, each with one descriptor (schemas and rules) that every layer
 * reads: validation, the session pipeline, MLS policy and the initiator's routing. A registry
 * starts from the WMP core table (`coreMethods`) and takes an application's or a profile's own
 * methods with `define`.
 */
export class MethodRegistry {
  readonly #specs = new Map<string, MethodSpec>();
  #frozen = false;

  /** `base`: the descriptors to start from (another registry's, or a table by name). */
  constructor(base: MethodRegistry | Readonly<Record<string, MethodSpec>> = {}) {
    const entries = base instanceof MethodRegistry ? base.#specs.entries() : Object.entries(base);
    for (const [name, spec] of entries) this.#specs.set(name, spec);
  }

  /**
   * Adds a custom method. Its name must be namespaced and not `wmp.*` (core §9.1), and not
   * defined yet; a `capability` in its rules takes part in negotiation like any other (core §9.2).
   */
  define(name: string, spec: MethodSpec): this {
    if (this.#frozen) throw new MethodRegistryError('frozen');
    if (typeof name !== 'string' || name.length > MAX_METHOD_NAME || !METHOD_NAME.test(name)) {
      throw new MethodRegistryError('invalid_name');
    }
    if (name.startsWith('wmp.')) throw new MethodRegistryError('reserved_name');
    if (this.#specs.has(name)) throw new MethodRegistryError('already_defined');
    checkDescriptor(spec);
    this.#specs.set(name, Object.freeze({ ...spec }));
    return this;
  }

  /** Takes no more definitions (a table shared by every endpoint, like `coreMethods`). */
  freeze(): this {
    this.#frozen = true;
    return this;
  }

  get(name: string): MethodSpec | undefined {
    return this.#specs.get(name);
  }

  has(name: string): boolean {
    return this.#specs.has(name);
  }

  /** The names of the methods whose descriptor satisfies `test`, in definition order. */
  names(test: (spec: MethodSpec) => boolean = () => true): string[] {
    return [...this.#specs].filter(([, spec]) => test(spec)).map(([name]) => name);
  }

  /** The descriptor of a known method; -32601 for any other name. */
  require(name: string): MethodSpec {
    const spec = this.#specs.get(name);
    if (!spec) throw new MethodNotFoundError({ reason: 'unknown method' });
    return spec;
  }

  /** A method's params checked against its schema: -32601 unknown, -32602 with `data.reason` naming the first bad field. */
  validateParams(method: string, params: unknown): unknown {
    const parsed = v.safeParse(this.require(method).params, params);
    if (!parsed.success) throw new InvalidParamsError({ reason: describe(parsed.issues) });
    return parsed.output;
  }

  /** A response's result checked for its method; a notification method has no result (-32602). */
  validateResult(method: string, result: unknown): unknown {
    const schema = this.require(method).result;
    if (!schema) throw new InvalidParamsError({ reason: `${method} has no result` });
    const parsed = v.safeParse(schema, result);
    if (!parsed.success) throw new InvalidParamsError({ reason: describe(parsed.issues) });
    return parsed.output;
  }
}
