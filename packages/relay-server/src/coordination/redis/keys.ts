/**
 * Key and channel names. Everything under one prefix (default `wmp:`), so several relays can share
 * a server; the caller's part (identity, signer key, recipient) goes inside `{...}`, a Redis
 * Cluster hash tag, so each structure's keys and channels hash by it. The caller's part is last and
 * the structure's name first, so one structure's names cannot be spelled by another's input.
 */
export class RedisKeys {
  readonly prefix: string;

  constructor(prefix = 'wmp:') {
    this.prefix = prefix;
  }

  bucket(name: string, key: string): string {
    return `${this.prefix}rl:${name}:{${key}}`;
  }

  budget(name: string, target: string): string {
    return `${this.prefix}kp:${name}:{${target}}`;
  }

  /** A signer's nonces (zset); requests with no key share one. */
  nonces(key: string | undefined): string {
    return key === undefined ? `${this.prefix}nonce-nokey` : `${this.prefix}nonce:{${key}}`;
  }

  /** The nonces of the requests from one source (zset), for its share. */
  nonceSource(source: string): string {
    return `${this.prefix}nonce-src:{${source}}`;
  }

  nonceTotals(): string {
    return `${this.prefix}nonce-totals`;
  }

  /** An entry of the single-use cache `space` (`replay` for DPoP jtis, `status` for peer statuses). */
  replay(key: string, space = 'replay'): string {
    return `${this.prefix}${space}:{${key}}`;
  }

  replayTotals(space = 'replay'): string {
    return `${this.prefix}${space}-totals`;
  }

  presence(identity: string): string {
    return `${this.prefix}presence:{${identity}}`;
  }

  /** A wake-up channel: `wake` (relay queues) or `box` (box streams). */
  channel(kind: string, recipient: string): string {
    return `${this.prefix}${kind}:{${recipient}}`;
  }
}
