import type { JsonRpcId, JsonRpcMessage } from '@wmp/jsonrpc-envelope';

/** What a binding knows about an incoming frame besides its bytes. */
export interface TransportMessageExtra {
  /** The session the binding names for this frame (HTTP `Wmp-Session-Id`), if any. */
  readonly sessionId?: string;
  /** Credentials the binding carried (HTTP `Authorization` header value), if any. */
  readonly authorization?: string;
}

export interface TransportSendOptions {
  /**
   * The request this message answers or belongs to. Request/response bindings (HTTP POST) use it
   * to put a response in the reply to the POST that carried the request.
   */
  readonly relatedRequestId?: JsonRpcId;
  /** The session the message belongs to, for bindings that fan out per session (SSE streams). */
  readonly sessionId?: string;
}

/**
 * Why a server closes a connection, for bindings that can say it on the wire: `overloaded` (a
 * cap is reached: WebSocket 1013 "try again later", HTTP 503) or `timeout` (it did not
 * authenticate in time: WebSocket 1008). Default `normal`.
 */
export type CloseReason = 'normal' | 'overloaded' | 'timeout';

/**
 * One connection of one binding (WebSocket, HTTP session, stdio, native messaging, Unix socket).
 * A transport moves frames; it does not parse JSON-RPC: the Peer does, so every binding applies
 * the same limits and answers bad input the same way. Modelled on the MCP SDK's Transport.
 */
export interface Transport {
  /** Starts receiving. Resolves once the connection is usable. */
  start(): Promise<void>;
  /** Sends one message or a batch as one frame. Rejects if the connection is closed. */
  send(message: JsonRpcMessage | readonly JsonRpcMessage[], options?: TransportSendOptions): Promise<void>;
  /**
   * Sends one message that is already JSON text (what `send` would write for it, e.g. a stored
   * message a relay forwards), without parsing and writing it again. Optional: `Peer.notify`
   * calls `send` on a binding without it.
   */
  sendText?(text: string, options?: TransportSendOptions): Promise<void>;
  /** Closes the connection; `onclose` fires once. */
  close(reason?: CloseReason): Promise<void>;
  /** One received frame, as text (or bytes, which the Peer decodes as strict UTF-8). */
  onmessage?: (frame: string | Uint8Array, extra?: TransportMessageExtra) => void;
  /** Fires exactly once, however the connection ended. */
  onclose?: () => void;
  /** A binding-level error (bad framing, socket error). The connection may still be open. */
  onerror?: (error: Error) => void;
  /** Largest frame this binding accepts, in bytes; the Peer refuses larger ones before parsing. */
  readonly maxMessageBytes?: number;
  /**
   * The peer's network address, when the binding knows it: used only as a key for per-source
   * limits, in memory, and never logged.
   */
  readonly remoteAddress?: string;
  /**
   * The certificate chain (DER, leaf first) the peer presented in this connection's TLS handshake,
   * when the binding terminates TLS and asked for one: the handshake proved the peer holds the
   * leaf's key; whether the chain is trusted is for an authenticator (`mtls`) to decide.
   */
  readonly peerCertificates?: readonly Uint8Array[];
  /**
   * Whether a message sent now reaches the peer: an HTTP session only while it has an open event
   * stream (docs/architecture.md, "Transports": only then is it online). Absent: always.
   */
  readonly reachable?: boolean;
  /** Fires when the transport becomes reachable again (an event stream opened). */
  onreachable?: () => void;
  /**
   * The one WMP session this connection is, for a binding whose connection carries one session
   * by name (an HTTP session, named by the session its create or resume announced).
   */
  readonly sessionId?: string | undefined;
  /**
   * The WMP session this connection is (`sessionId`) ended (closed, logged out, here or on another
   * node): the binding stops taking requests and event streams for it at once, and closes once
   * the answers in flight are out, so its token and streams die with the session. Absent: the
   * connection stays (a WebSocket carries any number of sessions).
   */
  sessionEnded?(): void;
}
