import {
  type Capabilities,
  coreMethods,
  MethodRegistry,
  MethodRegistryError,
  type MethodSpec,
} from '@wmp/jsonrpc-envelope';
import type { WmpContext } from './context.js';
import type { RequestHandler } from './peer.js';
import type { WmpServerOptions } from './services.js';

const DEFAULT_CAPABILITIES: Capabilities = {
  messaging: { max_size: 1024 * 1024 },
  flows: { max_concurrent: 16 },
  sign: { proof_types: ['jwt'] },
};

/**
 * What a responder serves: each method's descriptor (the WMP core table plus the ones an
 * application defines), its handler, and the capabilities it offers for negotiation. Every peer
 * of the server reads these tables, open connections included.
 */
export class ServerMethods {
  readonly registry: MethodRegistry;
  readonly handlers = new Map<string, RequestHandler<WmpContext>>();
  #supported: Capabilities;

  constructor(options: WmpServerOptions) {
    this.registry = new MethodRegistry(options.methods ?? coreMethods);
    const resolveTypes = Object.keys(options.resolvers ?? {});
    this.#supported = {
      ...(options.capabilities ?? DEFAULT_CAPABILITIES),
      ...(resolveTypes.length > 0 && !options.capabilities?.resolve
        ? { resolve: { supported_types: resolveTypes } }
        : {}),
    };
    for (const name of this.registry.names()) if (!coreMethods.has(name)) this.#offer(this.registry.require(name));
  }

  /** The capabilities negotiation intersects each offer with. */
  get supported(): Capabilities {
    return this.#supported;
  }

  /** Sets the handler of a method the registry knows; `not_defined` for any other name. */
  handle(method: string, handler: RequestHandler<WmpContext>): void {
    if (!this.registry.has(method)) throw new MethodRegistryError('not_defined');
    this.handlers.set(method, handler);
  }

  /** Defines a custom method (its schema and rules) and its handler in one step. */
  define(method: string, spec: MethodSpec, handler: RequestHandler<WmpContext>): void {
    this.registry.define(method, spec);
    this.#offer(spec);
    this.handlers.set(method, handler);
  }

  /**
   * A custom method's capability is offered for negotiation (core §9.2), with no parameters unless
   * the configured capabilities already describe it; the core ones are offered only as configured.
   */
  #offer(spec: MethodSpec): void {
    const capability = spec.capability;
    if (capability === undefined || capability in this.#supported) return;
    this.#supported = { ...this.#supported, [capability]: {} };
  }
}
