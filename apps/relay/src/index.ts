// The relay app as a library, for tests and for hosts that start it in-process: the settings
// parser, the relay key file, and the start function `wmp-relay` (src/main.ts) uses.
export { type AppConfig, EXIT_USAGE, envName, helpText, type ParseResult, parseConfig } from './config.js';
export { RelayAppError } from './errors.js';
export {
  DATABASE_FILE,
  IDENTITY_FILE,
  IdentityFileError,
  type LoadedIdentity,
  loadOrCreateIdentity,
} from './identity.js';
export { type RunningRelay, type StartOptions, startRelayApp } from './server.js';
