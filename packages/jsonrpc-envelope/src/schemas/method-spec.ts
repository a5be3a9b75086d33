import * as v from 'valibot';
import { WmpMetadataSchema } from './metadata.js';

/** How a method travels: with an id (answered), without one, or either way. */
export type MethodKind = 'request' | 'notification' | 'either';

export interface MethodSpec<
  P extends v.GenericSchema = v.GenericSchema,
  R extends v.GenericSchema | undefined = v.GenericSchema | undefined,
> {
  readonly kind: MethodKind;
  readonly params: P;
  /** Absent for notifications, which are never answered. */
  readonly result: R;
}

/** Params of every WMP method: a `wmp` metadata object plus the method's own members. */
export function params<const E extends v.ObjectEntries>(entries: E) {
  return v.looseObject({ wmp: WmpMetadataSchema, ...entries });
}

/** Results carry `wmp` too when the responder sets it. */
export function result<const E extends v.ObjectEntries>(entries: E) {
  return v.looseObject({ wmp: v.optional(WmpMetadataSchema), ...entries });
}

export function request<P extends v.GenericSchema, R extends v.GenericSchema>(p: P, r: R): MethodSpec<P, R> {
  return { kind: 'request', params: p, result: r };
}

export function notification<P extends v.GenericSchema>(p: P): MethodSpec<P, undefined> {
  return { kind: 'notification', params: p, result: undefined };
}

export function either<P extends v.GenericSchema, R extends v.GenericSchema>(p: P, r: R): MethodSpec<P, R> {
  return { kind: 'either', params: p, result: r };
}
