import { SessionError } from '../errors.js';

/**
 * Why the guarded fetcher did not fetch (or read) something. Stable codes and fixed messages that
 * never hold the URL, an address or any of the answer: callers pass them on to whoever asked.
 */
export type OutboundFailure = 'not_allowed' | 'address_refused' | 'redirect' | 'timeout' | 'unreachable' | 'too_large';

const MESSAGES: Readonly<Record<OutboundFailure, string>> = {
  not_allowed: 'only https (http on loopback when private peers are allowed) is fetched',
  address_refused: 'the server is at an address that is not fetched',
  redirect: 'redirects are not followed',
  timeout: 'the server did not answer in time',
  unreachable: 'the server could not be reached',
  too_large: 'the answer is too large',
};

export class OutboundFetchError extends SessionError {
  declare readonly code: OutboundFailure;
  constructor(code: OutboundFailure) {
    super(code, MESSAGES[code]);
    this.name = 'OutboundFetchError';
  }
}
