import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  ErrorCode,
  ErrorMessage,
  errorForCode,
  isErrorCode,
  isKnownMethod,
  isRequest,
  isResponse,
  type JsonRpcMessage,
  parseMessage,
  validateParams,
  validateResult,
  WmpError,
} from '../src/index.js';

interface Vector {
  id: string;
  input: unknown;
  expected_response?: unknown;
  expected_error?: { id: unknown; error: { code: number; message: string; data?: unknown } };
  handler_action?: { method: string; return?: unknown; error?: { code: number } };
}

const dir = new URL('../../../vectors/wmp/vectors/', import.meta.url);
const files = readdirSync(dir).filter((f) => f.endsWith('.json') && f !== 'vector-schema.json');
const load = (f: string) => JSON.parse(readFileSync(new URL(f, dir), 'utf8')) as Vector[];

/** Messages of a vector: one input, or the steps of a multi-step sequence. */
function inputsOf(v: Vector): unknown[] {
  return Array.isArray(v.input) ? v.input.map((s: { message: unknown }) => s.message) : [v.input];
}

function parseOne(value: unknown): JsonRpcMessage {
  const parsed = parseMessage(JSON.stringify(value));
  if (parsed.kind !== 'message') throw new Error('expected one message');
  return parsed.message;
}

// C6: this vector writes wmp.signature as an object; we require the compact detached string.
const SIGNATURE_OBJECT_VECTOR = 'message-deliver-with-signature';

describe('WMP vectors', () => {
  it('found all vector files', () => {
    expect(files.sort()).toEqual([
      'errors.json',
      'flow-lifecycle.json',
      'interop.json',
      'message-deliver.json',
      'resolve.json',
      'session-create.json',
      'session-lifecycle.json',
    ]);
  });

  for (const file of files) {
    describe(file, () => {
      for (const vector of load(file)) {
        it(`${vector.id}: input parses and its params match the method schema`, () => {
          for (const input of inputsOf(vector)) {
            const message = parseOne(input);
            expect(isResponse(message)).toBe(false);
            const { method, params } = message as { method: string; params: unknown };
            if (!isKnownMethod(method)) {
              // Only the method-not-found vectors use unknown methods.
              expect(vector.expected_error?.error.code).toBe(ErrorCode.MethodNotFound);
              expect(() => validateParams(method, params)).toThrow(
                expect.objectContaining({ code: ErrorCode.MethodNotFound }),
              );
            } else if (vector.id === SIGNATURE_OBJECT_VECTOR) {
              expect(() => validateParams(method, params)).toThrow(
                expect.objectContaining({ code: ErrorCode.InvalidParams }),
              );
            } else {
              expect(() => validateParams(method, params)).not.toThrow();
            }
          }
        });

        if (vector.expected_response) {
          it(`${vector.id}: expected response is a valid response with a valid result`, () => {
            const response = parseOne(vector.expected_response);
            expect(isResponse(response)).toBe(true);
            const input = parseOne(inputsOf(vector)[0]);
            expect(isRequest(input)).toBe(true);
            const method = (input as { method: string }).method;
            expect(() => validateResult(method, (response as { result: unknown }).result)).not.toThrow();
          });
        }

        if (vector.expected_error) {
          it(`${vector.id}: expected error is a known code that our error class reproduces`, () => {
            const expected = vector.expected_error!;
            const response = parseOne(expected);
            expect(isResponse(response)).toBe(true);
            const { code, data } = expected.error;
            expect(isErrorCode(code)).toBe(true);
            if (!isErrorCode(code)) return;
            const ours = errorForCode(code, data).toResponse(expected.id as string);
            expect(ours.error.code).toBe(code);
            expect(ours.error.message).toBe(ErrorMessage[code]);
            expect(ours.error).toEqual(
              data === undefined ? { code, message: ErrorMessage[code] } : { code, message: ErrorMessage[code], data },
            );
          });
        }
      }
    });
  }

  it('a notification vector is recognised as needing no response', () => {
    const interop = load('interop.json').find((v) => v.id === 'interop-notification-no-response')!;
    const message = parseOne(interop.input);
    expect('id' in message).toBe(false);
    expect(interop.expected_response).toBeNull();
  });

  it('a validator rejection is -32602 (interop-validation-reject)', () => {
    const vector = load('interop.json').find((v) => v.id === 'interop-validation-reject')!;
    const message = parseOne(vector.input) as { params: Record<string, unknown> };
    // Break the params the way a rejecting validator would see them: a required field missing.
    const { uri: _uri, ...withoutUri } = message.params;
    try {
      validateParams('wmp.resolve', withoutUri);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(WmpError);
      expect((e as WmpError).toJsonRpc()).toMatchObject({ code: vector.expected_error!.error.code });
      expect((e as WmpError).data).toEqual({ reason: expect.stringContaining('uri') });
    }
  });
});
