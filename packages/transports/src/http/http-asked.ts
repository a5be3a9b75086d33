import type { JsonRpcId } from '@wmp/jsonrpc-envelope';

/**
 * The requests the server sent on its HTTP sessions (over SSE) that no answer has named yet, and
 * the session each went to: a client that posts its answers naming no session (go-wmp sends no
 * `Wmp-Session-Id` on any POST, and an answer carries no `params.wmp.session_id`) is found by the
 * request's id. Bounded per session and in total: the oldest is forgotten first (its answer then
 * reaches nobody, as before).
 */
export class AskedRequests<S> {
  readonly #byId = new Map<JsonRpcId, S>();
  readonly #bySession = new Map<S, Set<JsonRpcId>>();
  readonly #max: number;
  readonly #perSession: number;

  constructor(max: number, perSession: number) {
    this.#max = max;
    this.#perSession = perSession;
  }

  get size(): number {
    return this.#byId.size;
  }

  /** The server sent request `id` on `session`. */
  asked(session: S, id: JsonRpcId): void {
    this.#drop(id);
    let ids = this.#bySession.get(session);
    if (ids === undefined) {
      ids = new Set();
      this.#bySession.set(session, ids);
    }
    if (ids.size >= this.#perSession) this.#drop(ids.values().next().value as JsonRpcId);
    if (this.#byId.size >= this.#max) this.#drop(this.#byId.keys().next().value as JsonRpcId);
    this.#byId.set(id, session);
    ids.add(id);
  }

  /** The session every one of `ids` went to, when they all went to the same one. */
  sessionOf(ids: readonly JsonRpcId[]): S | undefined {
    const session = ids.length === 0 ? undefined : this.#byId.get(ids[0]!);
    return session !== undefined && ids.every((id) => this.#byId.get(id) === session) ? session : undefined;
  }

  /** Answers to `ids` reached `session`. */
  answered(session: S, ids: readonly JsonRpcId[]): void {
    for (const id of ids) if (this.#byId.get(id) === session) this.#drop(id);
  }

  /** `session` ended: its requests are answered by nobody now. */
  forget(session: S): void {
    for (const id of this.#bySession.get(session) ?? []) this.#byId.delete(id);
    this.#bySession.delete(session);
  }

  #drop(id: JsonRpcId): void {
    const session = this.#byId.get(id);
    if (session === undefined) return;
    this.#byId.delete(id);
    const ids = this.#bySession.get(session);
    ids?.delete(id);
    if (ids?.size === 0) this.#bySession.delete(session);
  }
}
