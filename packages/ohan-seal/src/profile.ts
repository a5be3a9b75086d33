/** Wire identifiers and limits of the OHAN profile (docs/ohan-profile.md). */
export const EVENT_PROTOCOL = 'ohan.event.1';
export const SEAL_SUITE = 'x25519-sha256-aesgcm-1';
export const CARD_PROTOCOL = 'ohan.card.1';
export const EVENT_KIND = 'sealed';
/** Where a relay serves the box API (OHAN-04, `ohan.relay.1`): every route and signed target starts with it. */
export const OHAN_API_PATH = '/ohan/v1';

export const PAD_BLOCK = 256;
export const GCM_NONCE_BYTES = 12;
export const GCM_TAG_BYTES = 16;

export const OHAN_SKEW_SECONDS = 300;
export const MAX_TTL_SECONDS = 30 * 24 * 3600;
/** Default lifetime of an event made by `createEvent` when no `exp` is given. */
export const DEFAULT_TTL_SECONDS = 7 * 24 * 3600;
export const DEFAULT_MAX_EVENT_BYTES = 96 * 1024;
export const DEFAULT_STRANGER_BITS = 18;
export const MAX_STAMP_BITS = 255;
export const MAX_CARD_RELAYS = 16;
/** How long a request nonce is remembered: twice the skew, so a replay inside the window is seen. */
export const NONCE_TTL_SECONDS = 600;
