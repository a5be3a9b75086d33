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

  /** An entry of the single-use cache `space` (`nonce`: box requests, `replay`: DPoP jtis, `status`: peer statuses). */
  replay(value: string, space: string): string {
    return `${this.prefix}${space}:{${value}}`;
  }

  /** The count of the unexpired entries of cache `space`. */
  replayTotals(space: string): string {
    return `${this.prefix}${space}-totals`;
  }

  /** The entries of cache `space` that one `key` or `src` (source) holds (zset), for its share. */
  replayShare(kind: 'key' | 'src', owner: string, space: string): string {
    return `${this.prefix}${space}-${kind}:{${owner}}`;
  }

  presence(identity: string): string {
    return `${this.prefix}presence:{${identity}}`;
  }

  /** A wake-up channel: `wake` (relay queues) or `box` (box streams). */
  channel(kind: string, recipient: string): string {
    return `${this.prefix}${kind}:{${recipient}}`;
  }
}
