import type { Capabilities } from '@wmp/jsonrpc-envelope';
import {
  ConnectionClosedError,
  type IdentityPresenter,
  openPresenting,
  type Peer,
  type RequestOptions,
  type SessionBindingInfo,
  WmpSession,
} from '@wmp/session';
import { type CallRunner, requestOptions } from './call-runner.js';
import type { Connection } from './connection.js';
import type { Emitter } from './emitter.js';
import { WmpClientError } from './errors.js';
import { isConnectionLost, isResumeRefused } from './failures.js';
import type { FlowTracker } from './flows.js';
import type { GroupSession } from './group-session.js';
import { HeldGroups, joinGroupSession } from './groups.js';
import type { Inbox } from './inbox.js';
import { savedSession } from './persistence.js';
import type { Registration } from './registration.js';
import type { SavedState } from './saved-state.js';
import type { SessionCalls } from './session-calls.js';
import type { ClientCallOptions, ClientEvents, ClientIdentity, ExpectedRelay } from './types.js';

/** The identifier the relay knows the client by: its X.509 id when it has one, else its did:key. */
export function senderOf(identity: ClientIdentity): string {
  return identity.x509?.id ?? identity.did;
}

/** The session a message on our own session names when it is another one (a group we never joined). */
function unjoinedGroupOf(session: WmpSession, params: Record<string, unknown>): string | undefined {
  const named = (params.wmp as { session_id?: unknown } | undefined)?.session_id;
  return typeof named === 'string' && named !== session.id ? named : undefined;
}

/** The relay failed mutual authentication (`responder_auth_failed`, from `WmpSession.open`). */
function isRelayAuthFailure(e: unknown): boolean {
  return (e as { code?: unknown; data?: { reason?: unknown } })?.data?.reason === 'responder_auth_failed';
}

export interface SessionsOptions {
  readonly identity: ClientIdentity;
  /** `x5c`, or `mtls` (the TLS client certificate authenticates an X.509 identity inline at create). */
  readonly x509Auth: 'x5c' | 'mtls';
  /** What the client presents when it opens a session (core §5.6). */
  readonly present?: IdentityPresenter | undefined;
  /** Who the relay must prove to be when a session is opened (mutual authentication); undefined: not checked. */
  readonly expectedRelay: ExpectedRelay | undefined;
  readonly capabilities: Capabilities;
  readonly ttl: number;
  readonly requestTimeoutMs: number;
  readonly maxGroups: number;
  /** What the store had. */
  readonly loaded: SavedState;
  readonly connection: Connection;
  readonly runner: CallRunner;
  readonly registration: Registration;
  readonly inbox: Inbox;
  readonly flows: FlowTracker;
  readonly events: Emitter<ClientEvents>;
  readonly callsOn: (group: string) => SessionCalls;
  /** The sessions changed (to be stored). */
  readonly changed: () => void;
}

/**
 * The client's sessions at the relay: its own and its group sessions. Each new connection
 * resumes them (or opens a new own session when the relay refused), and their events are routed
 * to the inbox, the flows and the application.
 */
export class ClientSessions {
  readonly groups: HeldGroups;
  readonly #options: SessionsOptions;
  readonly #wired = new WeakSet<WmpSession>();
  #main: WmpSession | undefined;

  constructor(options: SessionsOptions) {
    this.#options = options;
    const { connection, inbox, flows } = options;
    this.groups = new HeldGroups(
      {
        maxGroups: options.maxGroups,
        sender: senderOf(options.identity),
        runner: options.runner,
        callsOn: options.callsOn,
        wire: (session, group) => this.#wire(session, group),
        receive: (session, group, params) => inbox.receive(session, group, params),
        forgotten: (id, error) => flows.closeAll(error, id),
        changed: options.changed,
        isClosed: () => connection.state === 'closed',
      },
      options.loaded.groups,
    );
  }

  /** The client's own session (undefined before the first connection). */
  get main(): WmpSession | undefined {
    return this.#main;
  }

  /** The session of `target` (ours when undefined); `ERR_CLIENT_UNKNOWN_GROUP` when not held. */
  sessionOf(target: string | undefined): WmpSession {
    if (target !== undefined) return this.groups.session(target);
    if (!this.#main) throw new WmpClientError('ERR_CLIENT_UNKNOWN_GROUP');
    return this.#main;
  }

  /** Sets up the sessions on a new connection: resume (or open) ours, resume the groups, register. */
  async establish(peer: Peer): Promise<void> {
    const { identity, loaded, registration, flows } = this.#options;
    const sender = senderOf(identity);
    let main = this.#main ?? (loaded.session ? WmpSession.restore(peer, { ...loaded.session, sender }) : undefined);
    // Wired before the resume: the relay replays the queue right after its answer.
    if (main) this.#wire(main, undefined);
    if (main && !(await this.#resume(main, peer))) main = undefined;
    let fresh = false;
    if (!main) {
      const previous = this.#main;
      main = await this.#open(peer, {});
      fresh = true;
      registration.reset();
      if (previous) flows.closeAll(new ConnectionClosedError(), previous.id);
    }
    this.#main = main;
    this.#wire(main, undefined);
    // Messages of a session the relay hosts for us without our joining it (we were listed in it,
    // e.g. the relay's fallback for an end-to-end session) come here too.
    main.takeUnrouted();
    await this.groups.resumeOn(peer, (session) => this.#resume(session, peer));
    await registration.connected(main, { fresh, groups: this.groups.size > 0 });
    this.#options.changed();
  }

  /** Creates a group session at the relay with these participants (and us). */
  async createGroup(
    participants: readonly string[],
    options: ClientCallOptions & { readonly ttl?: number },
  ): Promise<GroupSession> {
    const { connection, identity } = this.#options;
    this.groups.checkRoom();
    await connection.whenConnected(options.signal);
    const peer = connection.peer!;
    let session: WmpSession;
    try {
      session = await this.#open(peer, { participants, ttl: options.ttl, requestOptions: requestOptions(options) });
    } catch (e) {
      if (isConnectionLost(e)) connection.lost(peer, e);
      throw e;
    }
    return this.groups.add(session, [...new Set([senderOf(identity), ...participants])]);
  }

  /** Enters a group session we are listed in; what the relay queued for us on it follows. */
  async joinGroup(sessionId: string, options: ClientCallOptions): Promise<GroupSession> {
    const held = this.groups.handle(sessionId);
    if (held) return held;
    this.groups.checkRoom();
    const sender = senderOf(this.#options.identity);
    const joined = await this.#options.runner.run(
      undefined,
      (main) => joinGroupSession(main, sessionId, sender, options),
      { retries: 0, sessionLoss: false, signal: options.signal },
    );
    const group = this.groups.add(joined.session, joined.members);
    // The relay sends what it queued for us on the group right after the join answer, and the
    // first of it can be read in the same tick as the answer, before the session is attached
    // here (it is then left unacknowledged). A register has the relay send everything
    // unacknowledged again; the dedupe drops what came twice.
    if (this.#main) await this.#options.registration.renew(this.#main);
    return group;
  }

  /** What the store keeps of the sessions. */
  saved(): Pick<SavedState, 'session' | 'groups'> {
    const main = this.#main;
    return { session: main ? savedSession(main) : this.#options.loaded.session, groups: this.groups.saved() };
  }

  #open(
    peer: Peer,
    group: { participants?: readonly string[]; ttl?: number | undefined; requestOptions?: RequestOptions },
  ): Promise<WmpSession> {
    const { identity, capabilities, ttl, expectedRelay, x509Auth, present } = this.#options;
    const x509 = identity.x509;
    const open = (identityAssertions?: (s: SessionBindingInfo) => Promise<readonly unknown[]>) =>
      WmpSession.open(peer, {
        signer: identity.keypair,
        sender: senderOf(identity),
        ...(x509 && x509Auth === 'mtls' ? { auth: { type: 'mtls' } } : x509 ? { x509 } : {}),
        ...(expectedRelay ? { verifyResponder: expectedRelay } : {}),
        ...(group.participants ? { participants: [...group.participants] } : {}),
        capabilities,
        ttl: group.ttl ?? ttl,
        ...(group.requestOptions ? { requestOptions: group.requestOptions } : {}),
        ...(identityAssertions ? { identityAssertions } : {}),
      });
    return (present ? openPresenting(open, present) : open()).catch((e: unknown) => {
      // Not the relay we expected: nothing more goes to it (the session was closed there).
      throw isRelayAuthFailure(e) ? new WmpClientError('ERR_CLIENT_RELAY_AUTH', { cause: e }) : e;
    });
  }

  /**
   * `wmp.session.resume` on `peer`; false when the relay refused it for good (unknown, expired,
   * bad token). It claims no `last_received_id`: every message is acknowledged explicitly, and
   * the relay would count that id as acknowledging everything before it, including messages it
   * skipped for this connection (group sessions not resumed on it yet).
   */
  async #resume(session: WmpSession, peer: Peer): Promise<boolean> {
    session.lastReceivedId = undefined;
    try {
      await session.resume(peer, { timeoutMs: this.#options.requestTimeoutMs });
      return true;
    } catch (e) {
      if (isResumeRefused(e)) return false;
      throw e;
    }
  }

  /** Routes a session's events into the client (once per session object; it survives resumes). */
  #wire(session: WmpSession, group: string | undefined): void {
    if (this.#wired.has(session)) return;
    this.#wired.add(session);
    const { inbox, flows, events } = this.#options;
    session.on('message', (params) => inbox.message(session, group ?? unjoinedGroupOf(session, params), params));
    session.on('status', (params) => inbox.status(session, params));
    session.on('notification', ({ method, params }) => {
      if (flows.handle(session.id, method, params)) return;
      if (method === 'wmp.message.notice') {
        inbox.notice(session, params);
        return;
      }
      if (method === 'wmp.evidence.notify') return inbox.evidence(session, params);
      if (method === 'wmp.session.close' && group !== undefined) this.groups.forget(group, new ConnectionClosedError());
      events.emit('notification', { sessionId: session.id, method, params });
    });
  }
}
