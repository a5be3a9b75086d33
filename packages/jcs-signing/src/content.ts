import type { JsonRpcMessage } from '@wmp/jsonrpc-envelope';

type Obj = Record<string, unknown>;

function isObject(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function withoutWmp(o: Obj): Obj {
  const { wmp: _wmp, ...rest } = o;
  return rest;
}

/**
 * What a non-repudiation signature covers (core §5.4): a request's `params` without `wmp`; a
 * response's `result` without `wmp`; an error response's `error` without `data.wmp` (and without
 * `data` when nothing else was in it). The signature itself lives in that `wmp`.
 */
export function signedContentOf(message: JsonRpcMessage): unknown {
  if ('method' in message) {
    if (!isObject(message.params)) throw new TypeError('WMP params must be an object');
    return withoutWmp(message.params);
  }
  if ('result' in message) {
    return isObject(message.result) ? withoutWmp(message.result) : message.result;
  }
  const { data, ...error } = message.error;
  if (!isObject(data)) return data === undefined ? error : { ...error, data };
  const rest = withoutWmp(data);
  return Object.keys(rest).length === 0 ? error : { ...error, data: rest };
}

/** The `wmp` object of a message (params.wmp, result.wmp or error.data.wmp), if any. */
export function metadataOf(message: JsonRpcMessage): Obj | undefined {
  const container = containerOf(message);
  return container && isObject(container.wmp) ? container.wmp : undefined;
}

function containerOf(message: JsonRpcMessage): Obj | undefined {
  if ('method' in message) return isObject(message.params) ? message.params : undefined;
  if ('result' in message) return isObject(message.result) ? message.result : undefined;
  const data = message.error.data;
  return isObject(data) ? data : undefined;
}

/** A copy of `message` whose `wmp` object is `update(current wmp)`; containers are created as needed. */
export function withMetadata<M extends JsonRpcMessage>(message: M, update: (wmp: Obj) => Obj): M {
  if ('method' in message) {
    if (!isObject(message.params)) throw new TypeError('WMP params must be an object');
    return { ...message, params: { ...message.params, wmp: update({ ...(metadataOf(message) ?? {}) }) } };
  }
  if ('result' in message) {
    if (!isObject(message.result)) throw new TypeError('a signed result must be an object');
    return { ...message, result: { ...message.result, wmp: update({ ...(metadataOf(message) ?? {}) }) } };
  }
  const error = message.error;
  const data = isObject(error.data) ? error.data : error.data === undefined ? {} : undefined;
  if (!data) throw new TypeError('a signed error needs object data');
  return { ...message, error: { ...error, data: { ...data, wmp: update({ ...(metadataOf(message) ?? {}) }) } } };
}
