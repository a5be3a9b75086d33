import * as v from 'valibot';
import { WmpMetadataSchema } from './metadata.js';

/** How a method travels: with an id (answered), without one, or either way. */
export type MethodKind = 'request' | 'notification' | 'either';

/**
 * Who may call a method before its session is authenticated: `sessionless` methods make or find
 * their session themselves (create, resume, join), `pending` ones may run on a session still
 * waiting for its authentication; any other method needs an authenticated session.
 */
export type MethodAccess = 'sessionless' | 'pending' | 'authenticated';

/** Where an initiator takes a method its responder sends it: the session it names, or that group session's end-to-end layer. */
export type InitiatorRoute = 'session' | 'group';

/** A content method's rules under MLS (core §5.2). */
export interface ContentRules {
  /**
   * The capability its content counts under for `encrypted_capabilities` when calling it needs
   * none (a deliver is `messaging`); otherwise the method's own `capability` counts.
   */
  readonly capability?: string;
  /** Members that stay in the clear beside `ciphertext`: what a relay routes on. */
  readonly clear?: readonly string[];
}

/** The rules every layer reads from a method's descriptor, beside its schemas. */
export interface MethodRules {
  /** The capability the session must have negotiated to call it (core §4.2.2, §9.2); absent: none. */
  readonly capability?: string;
  /** Default `authenticated`. */
  readonly access?: MethodAccess;
  /** Application content: MLS-encrypted when the security mode asks (absent: control traffic, always clear). */
  readonly content?: ContentRules;
  /** Absent: a responder never sends it to an initiator (or an initiator does not take it). */
  readonly toInitiator?: InitiatorRoute;
}

/** One method: how it travels, its schemas and its rules. */
export interface MethodSpec<
  P extends v.GenericSchema = v.GenericSchema,
  R extends v.GenericSchema | undefined = v.GenericSchema | undefined,
> extends MethodRules {
  readonly kind: MethodKind;
  readonly params: P;
  /** Absent for notifications, which are never answered. */
  readonly result: R;
}

/** Params of every WMP method: a `wmp` metadata object plus the method's own members. */
export function methodParams<const E extends v.ObjectEntries>(entries: E) {
  return v.looseObject({ wmp: WmpMetadataSchema, ...entries });
}

/** Results carry `wmp` too when the responder sets it. */
export function methodResult<const E extends v.ObjectEntries>(entries: E) {
  return v.looseObject({ wmp: v.optional(WmpMetadataSchema), ...entries });
}

/** A method called with an id and answered with `r`. */
export function requestMethod<P extends v.GenericSchema, R extends v.GenericSchema>(
  p: P,
  r: R,
  rules: MethodRules = {},
): MethodSpec<P, R> {
  return { ...rules, kind: 'request', params: p, result: r };
}

/** A method sent without an id, never answered. */
export function notificationMethod<P extends v.GenericSchema>(p: P, rules: MethodRules = {}): MethodSpec<P, undefined> {
  return { ...rules, kind: 'notification', params: p, result: undefined };
}

/** A method that may travel either way (answered with `r` when it has an id). */
export function eitherMethod<P extends v.GenericSchema, R extends v.GenericSchema>(
  p: P,
  r: R,
  rules: MethodRules = {},
): MethodSpec<P, R> {
  return { ...rules, kind: 'either', params: p, result: r };
}
