import { type Capabilities, coreMethods } from '@wmp/jsonrpc-envelope';
import { ConnectionClosedError, type Peer, WmpSession } from '@wmp/session';
import { type CallRunner, requestOptions } from './call-runner.js';
import { WmpClientError } from './errors.js';
import { type GroupHold, GroupSession, type GroupSessionLayer } from './group-session.js';
import { isRecord, str } from './json-values.js';
import { savedSession } from './persistence.js';
import type { SavedGroup } from './saved-state.js';
import type { SessionCalls } from './session-calls.js';
import type { ClientCallOptions } from './types.js';

/** Group-session notifications that go to the session's end-to-end layer (the relay fans them out): their descriptors say so. */
const GROUP_CONTROL_METHODS = coreMethods.names((spec) => spec.toInitiator === 'group');

interface HeldGroup {
  /** Undefined until the first connection resumed it (a group read from the store). */
  session: WmpSession | undefined;
  readonly handle: GroupSession;
  readonly members: readonly string[];
  /** What the store had, for the first resume. */
  readonly saved: SavedGroup | undefined;
  /** The end-to-end layer attached to the session (`GroupSession.attach`), if any. */
  layer?: GroupSessionLayer | undefined;
}

export interface HeldGroupsOptions {
  readonly maxGroups: number;
  readonly sender: string;
  readonly runner: CallRunner;
  /** Calls on the group session `id`. */
  readonly callsOn: (id: string) => SessionCalls;
  /** Routes a session's events into the client. */
  readonly wire: (session: WmpSession, group: string) => void;
  /** Hands content a layer read another way to the inbox. */
  readonly receive: (session: WmpSession, group: string, params: Record<string, unknown>) => boolean;
  /** A group was let go: its flows end with `error`. */
  readonly forgotten: (id: string, error: unknown) => void;
  /** The set of groups changed (to be stored). */
  readonly changed: () => void;
  readonly isClosed: () => boolean;
}

/** The group sessions a client holds: each rides on the client's connection and is resumed with it. */
export class HeldGroups implements GroupHold {
  readonly #options: HeldGroupsOptions;
  readonly #groups = new Map<string, HeldGroup>();

  constructor(options: HeldGroupsOptions, saved: readonly SavedGroup[]) {
    this.#options = options;
    for (const g of saved) {
      this.#groups.set(g.id, {
        session: undefined,
        handle: this.#handle(g.id, g.members),
        members: g.members,
        saved: g,
      });
    }
  }

  get size(): number {
    return this.#groups.size;
  }

  handles(): GroupSession[] {
    return [...this.#groups.values()].map((g) => g.handle);
  }

  handle(id: string): GroupSession | undefined {
    return this.#groups.get(id)?.handle;
  }

  /** The session of a held group; `ERR_CLIENT_UNKNOWN_GROUP` otherwise. */
  session(id: string): WmpSession {
    const session = this.#groups.get(id)?.session;
    if (!session) throw new WmpClientError('ERR_CLIENT_UNKNOWN_GROUP');
    return session;
  }

  /** Throws `ERR_CLIENT_TOO_MANY_GROUPS` when no other group fits. */
  checkRoom(): void {
    if (this.#groups.size >= this.#options.maxGroups) throw new WmpClientError('ERR_CLIENT_TOO_MANY_GROUPS');
  }

  add(session: WmpSession, members: readonly string[]): GroupSession {
    const handle = this.#handle(session.id, members);
    this.#groups.set(session.id, { session, handle, members, saved: undefined });
    this.#options.wire(session, session.id);
    this.#options.changed();
    return handle;
  }

  forget(id: string, error: unknown): void {
    if (!this.#groups.delete(id)) return;
    this.#options.forgotten(id, error);
    this.#options.changed();
  }

  /** Takes the `wmp.mls.group.*` notifications of a new connection (before it starts). */
  listenOn(peer: Peer): void {
    for (const method of GROUP_CONTROL_METHODS) {
      peer.setNotificationHandler(method, (params) => this.#control(method, params));
    }
  }

  /** A `wmp.mls.group.*` notification: to the layer of the group session it names (none: ignored, left unacknowledged). */
  #control(method: string, params: unknown): void {
    const p = isRecord(params) ? params : {};
    const id = isRecord(p.wmp) ? str(p.wmp.session_id) : undefined;
    const layer = id === undefined ? undefined : this.#groups.get(id)?.layer;
    layer?.control(method, p);
  }

  /** Resumes every group on a new connection; one the relay refused is let go. */
  async resumeOn(peer: Peer, resume: (session: WmpSession) => Promise<boolean>): Promise<void> {
    const sender = this.#options.sender;
    for (const [id, held] of [...this.#groups]) {
      const session = held.session ?? (held.saved ? WmpSession.restore(peer, { ...held.saved, sender }) : undefined);
      // Wired before the resume: the relay replays the group's queue right after its answer.
      if (session) this.#options.wire(session, id);
      if (session && (await resume(session))) {
        held.session = session;
        if (held.layer) session.useCipher(held.layer.cipher);
      } else {
        this.forget(id, new ConnectionClosedError());
      }
    }
  }

  /** What the store keeps of the groups. */
  saved(): SavedGroup[] {
    const groups: SavedGroup[] = [];
    for (const held of this.#groups.values()) {
      const s = held.session && savedSession(held.session);
      if (s) groups.push({ ...s, members: held.members });
      else if (held.saved) groups.push(held.saved);
    }
    return groups;
  }

  // ---- GroupHold (what the GroupSession handles call) ----

  holds(id: string): boolean {
    return this.#groups.has(id) && !this.#options.isClosed();
  }

  attach(id: string, layer: GroupSessionLayer | undefined): void {
    const held = this.#groups.get(id);
    if (!held) throw new WmpClientError('ERR_CLIENT_UNKNOWN_GROUP');
    held.layer = layer;
    held.session?.useCipher(layer?.cipher);
  }

  receive(id: string, params: Record<string, unknown>): boolean {
    const session = this.#groups.get(id)?.session;
    return session !== undefined && this.#options.receive(session, id, params);
  }

  async close(id: string): Promise<void> {
    await this.#options.runner.run(id, (s) => s.close(), { retries: 0, sessionLoss: false });
    this.forget(id, new ConnectionClosedError());
  }

  #handle(id: string, members: readonly string[]): GroupSession {
    return new GroupSession(id, members, this.#options.callsOn(id), this);
  }
}

/** `wmp.session.join` on the client's session `main`: the group session it enters, and its members. */
export async function joinGroupSession(
  main: WmpSession,
  sessionId: string,
  sender: string,
  options: ClientCallOptions,
): Promise<{ readonly session: WmpSession; readonly members: readonly string[] }> {
  const result = await main.peer.request(
    'wmp.session.join',
    { wmp: { version: main.version, sender }, session_id: sessionId },
    requestOptions(options),
  );
  if (!isRecord(result) || typeof result.resumption_token !== 'string') {
    throw new WmpClientError('ERR_CLIENT_BAD_ANSWER');
  }
  const wmp = isRecord(result.wmp) ? result.wmp : {};
  const session = WmpSession.restore(main.peer, {
    id: str(wmp.session_id) ?? sessionId,
    version: str(wmp.version) ?? main.version,
    sender,
    capabilities: isRecord(result.capabilities) ? (result.capabilities as Capabilities) : undefined,
    security: isRecord(result.security) ? (result.security as never) : undefined,
    resumptionToken: result.resumption_token,
  });
  const listed = Array.isArray(result.participants) ? result.participants.filter((p) => str(p)) : [];
  return { session, members: listed.length > 0 ? (listed as string[]) : [sender] };
}
