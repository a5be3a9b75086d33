import { createHash } from 'node:crypto';

/** A Lua script, run by EVALSHA (EVAL when the server does not know it: after a restart, NOSCRIPT). */
export interface Script {
  readonly name: string;
  readonly source: string;
  readonly sha1: string;
}

/**
 * With a shebang (Redis 7), a script that may write is refused as a whole (OOM) while the server is
 * at `maxmemory`, before it runs: none of its writes happen. Without one, Redis checks only its
 * first write, and a script that first deletes (ZREMRANGEBYSCORE) could then grow memory anyway.
 */
function script(name: string, body: string, flags = ''): Script {
  const source = `#!lua${flags === '' ? '' : ` flags=${flags}`}\n${body.trim()}\n`;
  return { name, source, sha1: createHash('sha1').update(source).digest('hex') };
}

// Every script reads the server's clock (one clock for all nodes; Redis 7 replicates a script's
// effects, so TIME before writes is allowed) and touches only the keys it is given.
const NOW_MS = `
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
`;

/**
 * Token bucket, lease (docs/coordination.md: a node spends a lease locally instead of a round trip per take).
 * KEYS[1]: the bucket (hash `t` tokens, `at` ms, and the tokens leased out in window `w`, `c`,
 * and in the window before, `p`; a window is `ARGV[5]` ms, the leases' lifetime). ARGV: tokens
 * per ms, burst, need (what the take lacks), want (need plus what the node would keep), lease ms.
 * Refill is capped at burst minus what is leased and may be unspent (`c + p`: every lease of the
 * last one or two windows), so the tokens in the bucket and in the nodes' leases together never
 * pass the burst: a lease is a take made early, never an extra one. Grants `min(want, tokens)`
 * when at least `need` is there (else 0: nothing spent); the part beyond `need` counts as leased.
 * The key lives until it would be full and its leases are forgotten.
 */
export const LEASE = script(
  'lease',
  `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local need = tonumber(ARGV[3])
local want = tonumber(ARGV[4])
local span = tonumber(ARGV[5])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + tonumber(clock[2]) / 1000
local b = redis.call('HMGET', KEYS[1], 't', 'at', 'w', 'c', 'p')
local w = math.floor(now / span)
local c, p = 0, 0
if b[3] then
  local bw = tonumber(b[3])
  if bw == w then c, p = tonumber(b[4]), tonumber(b[5])
  elseif bw == w - 1 then p = tonumber(b[4]) end
end
local cap = burst - c - p
local tokens = cap
if b[1] then
  local elapsed = now - tonumber(b[2])
  if elapsed < 0 then elapsed = 0 end
  tokens = math.min(cap, tonumber(b[1]) + elapsed * rate)
end
local granted = 0
if tokens >= need then
  granted = math.max(need, math.min(want, math.floor(tokens)))
  tokens = tokens - granted
  c = c + granted - need
end
if tokens >= burst and c + p == 0 then
  redis.call('DEL', KEYS[1])
else
  redis.call('HSET', KEYS[1], 't', string.format('%.17g', tokens), 'at', string.format('%.17g', now), 'w', w, 'c', c, 'p', p)
  redis.call('PEXPIRE', KEYS[1], math.max(math.ceil((burst - tokens) / rate), 2 * span) + 1)
end
return granted
`,
);

/**
 * Key-package budget, reserve one. KEYS[1]: the target's window (hash `n` used, `id`). ARGV: per
 * target, window ms, a fresh window id. A window begins at its first counted fetch and lasts
 * window ms (the key's TTL). Returns the window's id, or nil when it is spent.
 */
export const RESERVE = script(
  'reserve',
  `
local limit = tonumber(ARGV[1])
if limit < 1 then return false end
local n = redis.call('HGET', KEYS[1], 'n')
if not n then
  redis.call('HSET', KEYS[1], 'n', 1, 'id', ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return ARGV[3]
end
if tonumber(n) >= limit then return false end
redis.call('HINCRBY', KEYS[1], 'n', 1)
return redis.call('HGET', KEYS[1], 'id')
`,
);

/**
 * Key-package budget, refund one into the window it was taken from (never a later one). KEYS[1]:
 * the window. ARGV[1]: its id. An empty window is deleted (the default state). Returns 1 or 0.
 */
export const REFUND = script(
  'refund',
  `
if redis.call('HGET', KEYS[1], 'id') ~= ARGV[1] then return 0 end
local n = redis.call('HINCRBY', KEYS[1], 'n', -1)
if n <= 0 then redis.call('DEL', KEYS[1]) end
return 1
`,
);

// The count of unexpired entries of a cache, all keys together, without a structure per entry: a
// hash of counts by expiry bucket (`floor(expiry / granularity)`), with `sum` and `low` (the first
// bucket not yet settled). A bucket leaves the sum once the clock is past its end, so every entry
// in it has expired: the count never drops an unexpired entry (it may keep an expired one for up
// to one granularity).
const TOTALS = `
local function settle(key, g)
  local cur = math.floor(now / g)
  local low = tonumber(redis.call('HGET', key, 'low') or cur)
  local sum = tonumber(redis.call('HGET', key, 'sum') or 0)
  if low < cur then
    if cur - low > 4096 then
      sum = 0
      local all = redis.call('HGETALL', key)
      for i = 1, #all, 2 do
        local f = all[i]
        if f ~= 'low' and f ~= 'sum' then
          if tonumber(f) < cur then redis.call('HDEL', key, f) else sum = sum + tonumber(all[i + 1]) end
        end
      end
    else
      for b = low, cur - 1 do
        local c = redis.call('HGET', key, tostring(b))
        if c then
          sum = sum - tonumber(c)
          redis.call('HDEL', key, tostring(b))
        end
      end
    end
    redis.call('HSET', key, 'low', tostring(cur), 'sum', tostring(sum))
  end
  return sum
end
local function count(key, expiry, g, sum)
  redis.call('HINCRBY', key, tostring(math.floor(expiry / g)), 1)
  redis.call('HSET', key, 'sum', tostring(sum + 1))
  redis.call('HSETNX', key, 'low', tostring(math.floor(now / g)))
  local keep = expiry - now + g
  if redis.call('PTTL', key) < keep then redis.call('PEXPIRE', key, keep) end
end
`;

/**
 * Single-use value, check and record. KEYS[1]: the entry, KEYS[2]: the cache's totals, KEYS[3..]:
 * the shares it counts against (zset value -> expiry ms: a key's, a source's). ARGV: expires at
 * (ms since the epoch), max entries, granularity ms, the value, then each share's bound. Returns 1
 * fresh (recorded, or already expired: nothing to remember), 0 used (recorded and unexpired), -2
 * no room at all, -3 no room in a share (nothing recorded, nothing evicted).
 */
export const USE_ONCE = script(
  'use-once',
  `${NOW_MS}${TOTALS}
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local at = tonumber(ARGV[1])
if at <= now then return 1 end
local g = tonumber(ARGV[3])
local sum = settle(KEYS[2], g)
if sum >= tonumber(ARGV[2]) then return -2 end
for i = 3, #KEYS do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now)
  if redis.call('ZCARD', KEYS[i]) >= tonumber(ARGV[i + 2]) then return -3 end
end
-- Redis keeps a key through its PXAT millisecond; the entry has expired at \`at\` (the shares drop
-- it then, as the memory cache does), so the key goes a millisecond earlier.
redis.call('SET', KEYS[1], '1', 'PXAT', string.format('%d', at - 1))
local ttl = at - now
for i = 3, #KEYS do
  redis.call('ZADD', KEYS[i], at, ARGV[4])
  if redis.call('PTTL', KEYS[i]) < ttl then redis.call('PEXPIRE', KEYS[i], ttl) end
end
count(KEYS[2], at, g, sum)
return 1
`,
);

/**
 * Presence, announce or refresh. KEYS[1]: the identity's nodes (zset node -> expiry ms). ARGV:
 * node, ttl ms. Expired nodes are dropped; the key lives as long as its latest entry.
 */
export const ANNOUNCE = script(
  'announce',
  `${NOW_MS}
local ttl = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
return 1
`,
);

/** Presence, the nodes of an identity whose entries have not expired (read only). KEYS[1]: the zset. */
export const NODES = script(
  'nodes',
  `${NOW_MS}
return redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf')
`,
  'no-writes',
);
