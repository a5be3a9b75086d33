import * as v from 'valibot';
import { InvalidParamsError, MethodNotFoundError } from './errors.js';
import { isKnownMethod, type MethodName, methodSpecs, type ParamsOf, type ResultOf } from './methods.js';

function describe(issues: readonly v.BaseIssue<unknown>[]): string {
  const issue = issues[0];
  if (!issue) return 'invalid';
  const path = issue.path?.map((p) => String(p.key)).join('.');
  return path ? `${path}: ${issue.message}` : issue.message;
}

/**
 * Checks a method's params against its schema and returns them typed.
 * Unknown method: -32601. Bad params: -32602 with `data.reason` naming the first bad field.
 */
export function validateParams<M extends MethodName>(method: M, params: unknown): ParamsOf<M>;
export function validateParams(method: string, params: unknown): unknown;
export function validateParams(method: string, params: unknown): unknown {
  if (!isKnownMethod(method)) throw new MethodNotFoundError();
  const parsed = v.safeParse(methodSpecs[method].params, params);
  if (!parsed.success) throw new InvalidParamsError({ reason: describe(parsed.issues) });
  return parsed.output;
}

/** Checks a response's result for a method; a notification method has no result (-32602). */
export function validateResult<M extends MethodName>(method: M, result: unknown): ResultOf<M>;
export function validateResult(method: string, result: unknown): unknown;
export function validateResult(method: string, result: unknown): unknown {
  if (!isKnownMethod(method)) throw new MethodNotFoundError();
  const schema = methodSpecs[method].result;
  if (!schema) throw new InvalidParamsError({ reason: `${method} has no result` });
  const parsed = v.safeParse(schema, result);
  if (!parsed.success) throw new InvalidParamsError({ reason: describe(parsed.issues) });
  return parsed.output;
}
