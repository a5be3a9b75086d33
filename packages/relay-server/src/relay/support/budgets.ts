import type { ByteBudget } from '@wmp/transports';

/** Memory shared by every connection of the relay (docs/architecture.md, "Bounds"). */
export interface RelayBudgets {
  /** Bytes sent to slow readers and not yet written (WebSocket buffers, SSE queues). */
  readonly outbound: ByteBudget;
  /** Characters kept for SSE replay. */
  readonly replay: ByteBudget;
  /** Request body bytes being read. */
  readonly bodies: ByteBudget;
}
