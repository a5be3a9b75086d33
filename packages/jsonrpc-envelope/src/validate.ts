import type { MethodRegistry } from './method-registry.js';
import { coreMethods, type MethodName, type ParamsOf, type ResultOf } from './methods.js';

/**
 * Checks a method's params against its schema (in `methods`, the WMP core table by default) and
 * returns them typed. Unknown method: -32601. Bad params: -32602 with `data.reason` naming the
 * first bad field.
 */
export function validateParams<M extends MethodName>(method: M, params: unknown, methods?: MethodRegistry): ParamsOf<M>;
export function validateParams(method: string, params: unknown, methods?: MethodRegistry): unknown;
export function validateParams(method: string, params: unknown, methods: MethodRegistry = coreMethods): unknown {
  return methods.validateParams(method, params);
}

/** Checks a response's result for a method; a notification method has no result (-32602). */
export function validateResult<M extends MethodName>(method: M, result: unknown, methods?: MethodRegistry): ResultOf<M>;
export function validateResult(method: string, result: unknown, methods?: MethodRegistry): unknown;
export function validateResult(method: string, result: unknown, methods: MethodRegistry = coreMethods): unknown {
  return methods.validateResult(method, result);
}
