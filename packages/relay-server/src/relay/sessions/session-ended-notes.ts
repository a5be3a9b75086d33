// A session that ends on one node of a cluster ends on the others at once (closed or logged out:
// dead on every binding), through the notes the queue wake-ups carry to the nodes where an
// identity has endpoints. Best effort, as every note: a node that misses one still refuses the
// session at its next request or stream (the store no longer has it).
import type { SessionRecord } from '@wmp/session';

const SESSION_ID = /^ses-[A-Za-z0-9]{1,128}$/;

/** Whether `value` has the form of a session id this relay issues. */
export function isSessionId(value: unknown): value is string {
  return typeof value === 'string' && SESSION_ID.test(value);
}

/** The note that says `sessionId` ended. */
export function sessionEndedNote(sessionId: string): string {
  return JSON.stringify({ ended: sessionId });
}

/** The session a note says ended, or undefined when it is another kind of note (a status). */
export function endedSessionOf(note: string): string | undefined {
  if (!note.startsWith('{"ended":')) return undefined;
  try {
    const { ended } = JSON.parse(note) as { ended?: unknown };
    return isSessionId(ended) ? ended : undefined;
  } catch {
    return undefined;
  }
}

/** Whom to tell: every identity that could be bound to the session on another node. */
export function identitiesOf(session: SessionRecord): string[] {
  return [...new Set(session.authenticated)];
}
