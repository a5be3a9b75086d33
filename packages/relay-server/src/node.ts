// Node-only entry: the relay (HTTP, WebSocket) and the OHAN box app, plus everything of the
// browser-safe entry. Storage drivers have their own entries (`./sqlite`), so importing the relay
// loads no database driver.

// The OHAN box HTTP API (ohan.relay.1) as a Hono app, to mount at BOX_API_PREFIX.
export { type BoxApp, createBoxApp } from './box-api/app.js';
export { mountBoxApp } from './box-api/mount.js';
export * from './index.js';
export { createRelayCore, type RelayCore } from './relay/core.js';
export { createRelay, type Relay } from './relay/create-relay.js';
export { nodePeerTransport } from './relay/federation/node-transport.js';
export { createRelayApp, type RelayAppInput } from './relay/http/http-app.js';
export {
  type RelayAuthOptions,
  type RelayDidWebSettings,
  relayAuthenticators,
} from './relay/sessions/authenticators.js';
export { type RelayTlsConfig, tlsServerOptions } from './relay/support/tls.js';
