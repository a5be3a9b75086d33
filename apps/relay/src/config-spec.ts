// The shape of one wmp-relay option (flag, variable, kind, where its value lands): what the
// option table and the auth options are written in.
import type { RelayLimits, RelayTimings } from '@wmp/relay-server';

/** The OHAN box settings the app passes on (each left out takes the library's default). */
export interface BoxSettings {
  readonly boxBytes: number;
  readonly strangerBits: number;
  readonly cardStampBits: number;
  readonly maxCards: number;
  readonly cardTtlSeconds: number;
  readonly maxEventBytes: number;
  readonly requestsPerSecond: number;
  readonly requestBurst: number;
}

/** `list`: repeatable flag; its variable holds the values separated by commas or white space. */
export type Kind = 'int' | 'bytes' | 'seconds' | 'string' | 'bool' | 'list';

/** Where a numeric option lands: a relay limit, a relay timing (seconds, or ms given in seconds) or a box setting. */
export type Target =
  | { readonly limits: keyof RelayLimits }
  | { readonly timings: keyof RelayTimings; readonly ms?: true }
  | { readonly box: keyof BoxSettings };

export interface OptionSpec {
  readonly flag: string;
  readonly kind: Kind;
  readonly env?: string;
  readonly help: string;
  /** As shown in `--help`, for options that are not a library setting. */
  readonly default?: string;
  readonly min?: number;
  readonly max?: number;
  readonly target?: Target;
}
