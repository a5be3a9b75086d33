// The one check that a package's errors are one family: each is an instance of the package's base
// class with its stable code and its fixed message, and is named after its own class.
import { expect } from 'vitest';

export type ErrorCase = readonly [error: Error & { readonly code: unknown }, code: string, message: string];

export function expectErrorFamily(base: abstract new (...args: never[]) => Error, cases: readonly ErrorCase[]): void {
  for (const [error, code, message] of cases) {
    expect(error).toBeInstanceOf(base);
    expect([error.code, error.message]).toEqual([code, message]);
    expect(error.name).toBe(error.constructor.name);
  }
}
