/** `wmp` of what the relay sends on a session. */
export function metaFor(sessionId: string, version = '0.1'): { version: string; session_id: string } {
  return { version, session_id: sessionId };
}
