/** The WebSocket subprotocol WMP clients request and servers echo (transport §3.1). */
export const WMP_SUBPROTOCOL = 'wmp.v1';

/** The close codes this binding uses (RFC 6455 §7.4.1). */
export const WsCloseCode = {
  Normal: 1000,
  GoingAway: 1001,
  /** A binary frame: WMP frames are text. */
  UnsupportedData: 1003,
  /** The peer stopped answering pings (never sent: the socket is terminated). */
  Abnormal: 1006,
  PolicyViolation: 1008,
  /** A frame over the payload limit. */
  MessageTooBig: 1009,
  /** The server failed to take the connection. */
  InternalError: 1011,
  /** The peer reads too slowly. */
  TryAgainLater: 1013,
} as const;

/** The relay default frame limit (docs/wmp-profile.md, "Messages"); every binding must accept at least 64 KiB. */
export const DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024;

/** Keepalive (transport §3.3): ping every 30 s, give up after 90 s without a pong. */
export const DEFAULT_PING_INTERVAL_MS = 30_000;
export const DEFAULT_PONG_TIMEOUT_MS = 90_000;
