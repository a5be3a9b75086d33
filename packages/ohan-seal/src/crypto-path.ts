import { backend } from '#crypto';

/**
 * Which implementation this build runs for X25519, AES-GCM and SHA-256: `node` (node:crypto) or
 * `portable` (noble). Ed25519 follows `@wmp/jcs-signing`'s own `cryptoPath`.
 */
export const cryptoPath: 'node' | 'portable' = backend.name;
