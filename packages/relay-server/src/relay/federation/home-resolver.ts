import { AnswerCache } from './answer-cache.js';

/**
 * Where an identifier is at home (docs/federation-profile.md): `here`, the origin of another relay
 * (`https://relay.example`), or undefined when this resolver has no answer (the next one is asked).
 * A resolver that knows every relay the identifier is homed at (a card lists several) says so
 * with `relays`. A profile adds its own (core §7.5.3) through `FederationConfig.resolvers`.
 */
export type HomeAnswer = 'here' | string | undefined | HomeFinding;

export interface HomeFinding {
  /** `here`, or the relay messages go to (the first of `relays` that is not us). */
  readonly home: string;
  /** Every relay origin the identifier is homed at (ours included when it is). */
  readonly relays: readonly string[];
}

export interface HomeResolver {
  /** Shown by `ohan.relay.resolve` as the source of an answer. */
  readonly name: string;
  resolve(identifier: string): Promise<HomeAnswer> | HomeAnswer;
}

export interface Resolution {
  /** `here`, or the home relay's origin. */
  readonly home: string;
  /** The resolver that answered; `default` when none did (the recipient is kept here). */
  readonly source: string;
  /**
   * Every relay origin the identifier is homed at, ours too (a peer among them may speak for it:
   * sender binding across hops); empty when nobody answered.
   */
  readonly relays: readonly string[];
  /** A resolver failed on the way (a server did not answer): the answer is cached briefly only. */
  readonly uncertain?: boolean;
}

/** Asks each resolver in turn; a resolver that fails counts as no answer (the next is asked). */
export async function resolveHome(
  resolvers: readonly HomeResolver[],
  identifier: string,
  ours: string,
): Promise<Resolution> {
  let uncertain = false;
  for (const resolver of resolvers) {
    let answer: HomeAnswer;
    try {
      answer = await resolver.resolve(identifier);
    } catch {
      answer = undefined;
      uncertain = true;
    }
    if (answer === undefined) continue;
    const finding = typeof answer === 'string' ? { home: answer, relays: [answer === 'here' ? ours : answer] } : answer;
    return {
      home: finding.home === ours ? 'here' : finding.home,
      source: resolver.name,
      relays: finding.relays,
      ...(uncertain ? { uncertain } : {}),
    };
  }
  return { home: 'here', source: 'default', relays: [], ...(uncertain ? { uncertain } : {}) };
}

/**
 * Resolutions cached with a TTL and a bound (oldest first out), one lookup in flight per
 * identifier; an answer reached past a failure (unresolvable, for now) is cached too, for
 * `unresolvedTtlMs`.
 */
export class ResolutionCache extends AnswerCache<Resolution> {
  constructor(ttlMs: number, max: number, now: () => number, unresolvedTtlMs = Math.min(ttlMs, 60_000)) {
    super(max, (value) => (value.uncertain ? Math.min(ttlMs, unresolvedTtlMs) : ttlMs), now);
  }
}
