/**
 * Base of wmp-relay's own start-up errors: a stable `code`, and a message for the operator that
 * names the flag, variable or file at fault (what the operator gave, never a URL that may hold a
 * password). What the relay answers clients is the relay-server's business, not these.
 */
export class RelayAppError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = 'RelayAppError';
    this.code = code;
  }
}
