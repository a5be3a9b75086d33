/** Counters of federation, per peer origin and per refusal reason (rendered with the relay's metrics). */
export class FederationMetrics {
  /** Entries the peer took (its result came), by peer origin. */
  readonly forwardedByPeer = new Map<string, number>();
  /** Statuses a peer sent back, by peer origin. */
  readonly statusesByPeer = new Map<string, number>();
  /** Copies of a status already passed on (another link, another node, a replay), by peer origin. */
  readonly duplicateStatusesByPeer = new Map<string, number>();
  /** Outgoing entries a peer refused (or the ERDS check did), by `origin reason`. */
  readonly refusedOutByPeer = new Map<string, number>();
  /** Forwarded messages this relay refused, by reason. */
  readonly refusedInByReason = new Map<string, number>();
  /** Forwarded messages this relay took from peers. */
  accepted = 0;
  /** Lookups refused because the identity that caused them, or everyone, spent the resolution budget. */
  resolvesRefused = 0;
  /** Outbox appends a cap refused, by `origin reason` (the recipient's part, a sender's share, the outbox's own caps). */
  readonly outboxFullByPeer = new Map<string, number>();

  forwarded(origin: string, n: number): void {
    bump(this.forwardedByPeer, origin, n);
  }

  statusBack(origin: string): void {
    bump(this.statusesByPeer, origin, 1);
  }

  statusDuplicate(origin: string): void {
    bump(this.duplicateStatusesByPeer, origin, 1);
  }

  refusedOut(origin: string, reason: string): void {
    bump(this.refusedOutByPeer, `${origin} ${reason}`, 1);
  }

  refusedIn(reason: string): void {
    bump(this.refusedInByReason, reason, 1);
  }

  resolveRefused(): void {
    this.resolvesRefused++;
  }

  outboxFull(origin: string, reason: string): void {
    bump(this.outboxFullByPeer, `${origin} ${reason}`, 1);
  }
}

function bump(map: Map<string, number>, key: string, n: number): void {
  map.set(key, (map.get(key) ?? 0) + n);
}

/** A Prometheus label value (backslash, quote and newline escaped). */
function label(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

interface FederationGauges {
  readonly metrics: FederationMetrics;
  peerGauges(): Promise<Array<{ origin: string; connected: boolean; sending: boolean; count: number; bytes: number }>>;
}

/** Federation's part of `/metrics`: per peer connected, outbox depth and bytes, forwarded, refused by reason. */
export async function renderFederationMetrics(federation: FederationGauges): Promise<string> {
  const peers = await federation.peerGauges();
  const m = federation.metrics;
  const lines: string[] = [];
  const metric = (name: string, type: 'gauge' | 'counter', help: string, samples: Array<[string, number]>) => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [labels, value] of samples) lines.push(`${name}${labels} ${value}`);
  };
  const byPeer = (origin: string) => `{peer="${label(origin)}"}`;
  metric(
    'wmp_relay_peer_connected',
    'gauge',
    'Whether the link to a peer relay is up.',
    peers.map((p) => [byPeer(p.origin), p.connected ? 1 : 0]),
  );
  metric(
    'wmp_relay_peer_outbox_sending',
    'gauge',
    "Whether this node is sending a peer relay's outbox now (in a cluster: it holds the outbox's lease).",
    peers.map((p) => [byPeer(p.origin), p.sending ? 1 : 0]),
  );
  metric(
    'wmp_relay_peer_outbox_messages',
    'gauge',
    'Messages waiting in the outbox of a peer relay.',
    peers.map((p) => [byPeer(p.origin), p.count]),
  );
  metric(
    'wmp_relay_peer_outbox_bytes',
    'gauge',
    'Bytes waiting in the outbox of a peer relay.',
    peers.map((p) => [byPeer(p.origin), p.bytes]),
  );
  metric(
    'wmp_relay_peer_forwarded_total',
    'counter',
    'Messages a peer relay took from our outbox.',
    [...m.forwardedByPeer].map(([origin, n]) => [byPeer(origin), n]),
  );
  metric(
    'wmp_relay_peer_statuses_total',
    'counter',
    'Statuses a peer relay sent back that were passed on to their senders.',
    [...m.statusesByPeer].map(([origin, n]) => [byPeer(origin), n]),
  );
  metric(
    'wmp_relay_peer_status_duplicates_total',
    'counter',
    'Copies of a status already passed on (another link or node of this relay, a replay): dropped.',
    [...m.duplicateStatusesByPeer].map(([origin, n]) => [byPeer(origin), n]),
  );
  metric(
    'wmp_relay_peer_refused_out_total',
    'counter',
    'Outbox messages a peer relay (or the ERDS check) refused, by reason.',
    [...m.refusedOutByPeer].map(([key, n]) => {
      const at = key.lastIndexOf(' ');
      return [`{peer="${label(key.slice(0, at))}",reason="${label(key.slice(at + 1))}"}`, n];
    }),
  );
  metric(
    'wmp_relay_peer_outbox_full_total',
    'counter',
    "Messages a peer relay's outbox refused (-31014), by the cap: the recipient's part, a sender's share, the outbox's own.",
    [...m.outboxFullByPeer].map(([key, n]) => {
      const at = key.lastIndexOf(' ');
      return [`{peer="${label(key.slice(0, at))}",reason="${label(key.slice(at + 1))}"}`, n];
    }),
  );
  metric(
    'wmp_relay_federation_resolves_refused_total',
    'counter',
    'Home lookups refused: the identity that caused them, or everyone, spent the resolution budget.',
    [['', m.resolvesRefused]],
  );
  metric(
    'wmp_relay_federation_refused_total',
    'counter',
    'Forwarded messages this relay refused, by reason.',
    [...m.refusedInByReason].map(([reason, n]) => [`{reason="${label(reason)}"}`, n]),
  );
  metric('wmp_relay_federation_accepted_total', 'counter', 'Forwarded messages this relay took from peers.', [
    ['', m.accepted],
  ]);
  return `${lines.join('\n')}\n`;
}
