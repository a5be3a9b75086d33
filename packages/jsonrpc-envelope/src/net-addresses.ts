/**
 * IP addresses, pure and browser-safe: which ones an outgoing fetch on someone else's behalf
 * (federation, did:web) must not reach unless the operator allows it (loopback, private,
 * link-local, unique-local, shared, documentation, multicast and other reserved ranges), and the
 * one loopback test of the tree. Both judge addresses, never host names: the Node fetcher applies
 * them to the address it connects to (after DNS), URL checks to a host that is itself an address.
 */

function parseIpv4(text: string): number[] | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  const out: number[] = [];
  for (const p of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(p)) return undefined;
    const n = Number(p);
    if (n > 255) return undefined;
    out.push(n);
  }
  return out;
}

function parseIpv6(text: string): number[] | undefined {
  let t = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const zone = t.indexOf('%');
  if (zone >= 0) t = t.slice(0, zone);
  if (t.length > 45 || !/^[0-9A-Fa-f:.]+$/.test(t)) return undefined;
  const lastColon = t.lastIndexOf(':');
  if (lastColon < 0) return undefined;
  let tail: number[] = [];
  if (t.slice(lastColon + 1).includes('.')) {
    // A trailing dotted quad is the last 32 bits.
    const v4 = parseIpv4(t.slice(lastColon + 1));
    if (!v4) return undefined;
    tail = [(v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!];
    t = t.slice(0, lastColon + 1);
    if (!t.endsWith('::')) t = t.slice(0, -1);
  }
  const halves = t.split('::');
  if (halves.length > 2) return undefined;
  const groups = (s: string) => (s === '' ? [] : s.split(':'));
  const head = groups(halves[0]!);
  const rest = halves.length === 2 ? groups(halves[1]!) : [];
  if (![...head, ...rest].every((g) => /^[0-9A-Fa-f]{1,4}$/.test(g))) return undefined;
  const count = head.length + rest.length + tail.length;
  if (halves.length === 1 ? count !== 8 : count > 7) return undefined;
  return [
    ...head.map((g) => Number.parseInt(g, 16)),
    ...new Array<number>(8 - count).fill(0),
    ...rest.map((g) => Number.parseInt(g, 16)),
    ...tail,
  ];
}

function privateV4([a, b, c]: number[]): boolean {
  return (
    a === 0 ||
    a === 10 ||
    a === 127 ||
    (a === 100 && b! >= 64 && b! <= 127) ||
    (a === 169 && b === 254) ||
    (a === 172 && b! >= 16 && b! <= 31) ||
    (a === 192 && b === 0 && (c === 0 || c === 2)) ||
    (a === 192 && b === 88 && c === 99) ||
    (a === 192 && b === 168) ||
    (a === 198 && (b === 18 || b === 19)) ||
    (a === 198 && b === 51 && c === 100) ||
    (a === 203 && b === 0 && c === 113) ||
    a! >= 224
  );
}

function embeddedV4(hi: number, lo: number): number[] {
  return [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff];
}

function privateV6(w: number[]): boolean {
  const zeroTo = (n: number) => w.slice(0, n).every((x) => x === 0);
  // IPv4-mapped ::ffff:a.b.c.d and IPv4-compatible ::a.b.c.d (deprecated; includes :: and ::1)
  if (zeroTo(5) && w[5] === 0xffff) return privateV4(embeddedV4(w[6]!, w[7]!));
  if (zeroTo(6)) return true;
  // NAT64 64:ff9b::/96 carries an IPv4 address; 64:ff9b:1::/48 is for local use
  if (w[0] === 0x64 && w[1] === 0xff9b) return w[2] !== 0 || privateV4(embeddedV4(w[6]!, w[7]!));
  // 6to4 2002::/16 carries an IPv4 address in its next 32 bits
  if (w[0] === 0x2002) return privateV4(embeddedV4(w[1]!, w[2]!));
  // Only global unicast 2000::/3 is public, less Teredo 2001::/32 and documentation 2001:db8::/32
  if ((w[0]! & 0xe000) !== 0x2000) return true;
  if (w[0] === 0x2001 && (w[1] === 0 || w[1] === 0xdb8)) return true;
  return false;
}

/** The address a host names when it is an IP literal (IPv4 dotted quad, IPv6 with or without brackets). */
export function ipLiteralOf(host: string): { family: 4 | 6; words: number[] } | undefined {
  const v4 = parseIpv4(host);
  if (v4) return { family: 4, words: v4 };
  const v6 = host.includes(':') ? parseIpv6(host) : undefined;
  return v6 ? { family: 6, words: v6 } : undefined;
}

/** True for an address no public fetch should reach (and for text that is not an address at all). */
export function isPrivateAddress(address: string): boolean {
  const ip = ipLiteralOf(address);
  if (!ip) return true;
  return ip.family === 4 ? privateV4(ip.words) : privateV6(ip.words);
}

/**
 * The loopback test: IPv4 127.0.0.0/8, IPv6 ::1 and IPv4-mapped ::ffff:127.x.y.z (brackets
 * allowed). An address, never a host name: `127.attacker.example` is not loopback.
 */
export function isLoopbackAddress(address: string): boolean {
  const ip = ipLiteralOf(address);
  if (ip === undefined) return false;
  const w = ip.words;
  if (ip.family === 4) return w[0] === 127;
  const zeroTo = (n: number) => w.slice(0, n).every((x) => x === 0);
  if (zeroTo(7) && w[7] === 1) return true;
  return zeroTo(5) && w[5] === 0xffff && w[6]! >> 8 === 127;
}

/**
 * Whether a URL's host stays on this machine, for the rule "plain http only on loopback": a
 * loopback address (`isLoopbackAddress`), or the name `localhost` itself (RFC 6761 reserves it
 * for loopback). No other name: what a name points at is for DNS to say, and a fetcher that must
 * know checks the address it connects to.
 */
export function isLoopbackHost(hostname: string): boolean {
  return hostname.toLowerCase() === 'localhost' || isLoopbackAddress(hostname);
}
