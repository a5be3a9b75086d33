import type { JsonRpcMessage } from '@wmp/jsonrpc-envelope';
import type { CloseReason, Transport, TransportMessageExtra, TransportSendOptions } from '@wmp/session';

type MessageHandler = (frame: string | Uint8Array, extra?: TransportMessageExtra) => void;

export interface TransportObserver {
  /** An error answer went out (counted by code for /metrics). */
  error(code: number): void;
  /** The connection ended. */
  closed(): void;
}

/**
 * Wraps a binding's transport to count what the relay answers with an error and when the
 * connection ends, without touching the session engine: every refusal (a schema, a sender
 * binding, a full queue) leaves through `send`.
 */
export class ObservedTransport implements Transport {
  readonly #inner: Transport;
  readonly #observer: TransportObserver;
  #onclose: (() => void) | undefined;
  #ended = false;

  constructor(inner: Transport, observer: TransportObserver) {
    this.#inner = inner;
    this.#observer = observer;
    if (inner.maxMessageBytes !== undefined) this.maxMessageBytes = inner.maxMessageBytes;
    if (inner.remoteAddress !== undefined) this.remoteAddress = inner.remoteAddress;
    if (inner.peerCertificates !== undefined) this.peerCertificates = inner.peerCertificates;
    // A notification already JSON text (no error answer to count), when the binding sends text.
    const sendText = inner.sendText?.bind(inner);
    if (sendText !== undefined) this.sendText = sendText;
    inner.onclose = () => {
      this.end();
      this.#onclose?.();
    };
  }

  /** Tells the observer the connection ended, once (the binding's close, or a refusal before start). */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#observer.closed();
  }

  readonly maxMessageBytes?: number;
  readonly remoteAddress?: string;
  readonly sendText?: (text: string, options?: TransportSendOptions) => Promise<void>;
  /** The TLS client certificate chain of the binding, for `mtls`. */
  readonly peerCertificates?: readonly Uint8Array[];

  // The Peer sets these once; they go straight to the binding's transport.
  get onmessage(): MessageHandler {
    return (frame, extra) => this.#inner.onmessage?.(frame, extra);
  }
  set onmessage(handler: MessageHandler) {
    this.#inner.onmessage = handler;
  }
  get onerror(): (error: Error) => void {
    return (error) => this.#inner.onerror?.(error);
  }
  set onerror(handler: (error: Error) => void) {
    this.#inner.onerror = handler;
  }
  get reachable(): boolean {
    return this.#inner.reachable !== false;
  }
  get onreachable(): () => void {
    return () => this.#inner.onreachable?.();
  }
  set onreachable(handler: () => void) {
    this.#inner.onreachable = handler;
  }
  get onclose(): () => void {
    return () => this.#onclose?.();
  }
  set onclose(handler: () => void) {
    this.#onclose = handler;
  }

  get sessionId(): string | undefined {
    return this.#inner.sessionId;
  }

  sessionEnded(): void {
    this.#inner.sessionEnded?.();
  }

  start(): Promise<void> {
    return this.#inner.start();
  }

  send(message: JsonRpcMessage | readonly JsonRpcMessage[], options?: TransportSendOptions): Promise<void> {
    if (Array.isArray(message)) {
      for (const m of message) this.#count(m);
    } else this.#count(message as JsonRpcMessage);
    return this.#inner.send(message, options);
  }

  close(reason?: CloseReason): Promise<void> {
    return this.#inner.close(reason);
  }

  #count(message: JsonRpcMessage): void {
    if ('error' in message) this.#observer.error(message.error.code);
  }
}
