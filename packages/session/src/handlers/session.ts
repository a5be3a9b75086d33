import { createChallenge } from '@wmp/jcs-signing';
import {
  InvalidParamsError,
  NotAuthorizedError,
  type ParamsOf,
  SessionExpiredError,
  SessionNotFoundError,
} from '@wmp/jsonrpc-envelope';
import { checkAtCreate, checkPresented } from '../assertions/session-assertions.js';
import { authOutcome } from '../auth/authenticator.js';
import { responderAuth } from '../auth/responder.js';
import { checkSenderScheme } from '../auth/schemes.js';
import type { Connection, WmpContext } from '../context.js';
import { newSessionId } from '../ids.js';
import { negotiateCapabilities, negotiateSecurity, negotiateVersion, WMP_VERSION } from '../negotiate.js';
import type { RequestHandler } from '../peer.js';
import { UNKNOWN_SESSION } from '../refusal-reasons.js';
import type { ServerServices } from '../services.js';
import { authenticated, issueToken, joined, resumeWith, takeChallenge } from '../session-changes.js';
import {
  type AuthenticatedWith,
  type ChallengeRecord,
  DEFAULT_PENDING_TTL_SECONDS,
  MAX_PARTICIPANTS,
  type SessionRecord,
} from '../session-model.js';

/** A session with participants besides its creator (a relay hosts these, docs/architecture.md, "Group sessions"). */
function isGroup(session: SessionRecord): boolean {
  return session.participants.length > 1;
}

/**
 * What `wmp.session.close` from `sender` on `connection` does (and a binding's own end of the
 * session, `DELETE /wmp`): the session is deleted, so its resumption token, and every binding
 * bound to it, die with it (`ended`). Only the creator ends a group session for everyone; another
 * participant's close ends its own part: its binding on this connection, not the session.
 */
export async function closeSessionAs(
  s: ServerServices,
  connection: Connection,
  session: SessionRecord,
  sender: string | undefined,
): Promise<void> {
  if (isGroup(session) && sender !== undefined && sender !== session.initiator) {
    s.unbindConnection(connection, session.id);
    s.options.hooks?.partLeft?.(session, sender, connection);
    if (connection.peer.transport.sessionId === session.id) connection.peer.transport.sessionEnded?.();
    return;
  }
  // Closed on this connection at once: a call that follows the close on it is -31000 even
  // while the store's delete is still being written (messages of a connection run concurrently).
  connection.closing ??= new Set();
  connection.closing.add(session.id);
  try {
    await s.store.delete(session.id);
    s.ended({ ...session, state: 'closed' });
  } finally {
    connection.closing?.delete(session.id);
  }
}

/** wmp.session.create / authenticate / resume / join / close (core §4). */
export function sessionHandlers(s: ServerServices): Record<string, RequestHandler<WmpContext>> {
  const options = s.options;
  const supportedVersions = options.supportedVersions ?? [WMP_VERSION];
  const requireAuth = options.requireAuthentication ?? true;
  const pendingTtl = options.pendingTtlSeconds ?? DEFAULT_PENDING_TTL_SECONDS;

  // Cheap refusals first: nothing is verified or stored for a connection at its cap. The slot is
  // taken at once (unauthenticated; the id is known to nobody yet): creates pipelined or in one
  // batch run concurrently, and each would pass the check before any of them was bound.
  const create: RequestHandler<WmpContext> = async (raw, ctx) => {
    // A responder that routes sessions (a relay) may have another party answer this one.
    const offered = await options.routes?.offer?.(raw as ParamsOf<'wmp.session.create'>, ctx);
    if (offered !== undefined && 'answer' in offered) return offered.answer;
    const id = newSessionId();
    s.checkBind(ctx.connection, id);
    s.bind(ctx.connection, id, undefined);
    try {
      const result = await createAs(id, raw, ctx);
      if (offered === undefined) return result;
      return { ...result, wmp: { ...(result.wmp as Record<string, unknown>), ...offered.host } };
    } catch (e) {
      s.unbindConnection(ctx.connection, id);
      throw e;
    }
  };

  const createAs = async (id: string, raw: unknown, ctx: WmpContext): Promise<Record<string, unknown>> => {
    const params = raw as ParamsOf<'wmp.session.create'>;
    const version = negotiateVersion(params.wmp.version, supportedVersions);
    const capabilities = negotiateCapabilities(params.capabilities_offered, s.supportedCapabilities);
    const security = negotiateSecurity(
      params.security,
      options.security ?? { modes: ['tls', 'mls', 'mls-optional'], cipherSuites: [1, 2] },
    );
    const now = s.now();
    const ttl = Math.min(params.ttl ?? options.defaultTtlSeconds ?? 3600, options.maxTtlSeconds ?? 86_400);
    const sender = params.wmp.sender;
    checkParticipants(params.participants, options.participantProblem);
    const participants = [...new Set([...(sender ? [sender] : []), ...(params.participants ?? [])])].slice(
      0,
      MAX_PARTICIPANTS,
    );
    // A sender whose scheme no authenticator proves is refused before anything is stored.
    if (params.auth || requireAuth) checkSenderScheme(s.authenticators, sender, params.auth?.type);
    // Inline authentication (bearer and other challenge-free types) happens right here.
    let identity: string | undefined;
    let how: AuthenticatedWith | undefined;
    if (params.auth) {
      const authenticator = s.authenticators.get(params.auth.type);
      if (!authenticator || authenticator.needsChallenge)
        throw new NotAuthorizedError({ reason: 'unsupported inline auth type' });
      const outcome = authOutcome(
        await authenticator.authenticate({
          auth: params.auth,
          sessionId: '',
          sender,
          challenge: undefined,
          timestamp: params.wmp.timestamp,
          now,
          ...(ctx.connection.peerCertificates ? { peerCertificates: ctx.connection.peerCertificates } : {}),
        }),
        params.auth.type,
      );
      identity = outcome.identity;
      how = outcome.how;
    }
    checkAtCreate(options.identityAssertions, params.wmp.identity_assertions, identity);
    const pending = identity === undefined && requireAuth;
    // With assertions checked, an inline-authenticated session gets a challenge too: the nonce
    // of the assertions its messages may carry (core §5.6); it answers no authentication.
    const challenge = identity === undefined || options.identityAssertions ? createChallenge() : undefined;
    const created: SessionRecord = {
      id,
      version,
      initiator: identity ?? sender,
      participants: identity && !participants.includes(identity) ? [identity, ...participants] : participants,
      capabilities,
      security,
      state: pending ? 'pending' : 'active',
      authenticated: identity ? [identity] : [],
      ...(identity && how ? { authenticatedWith: { [identity]: how } } : {}),
      challenge:
        challenge && identity === undefined
          ? { value: challenge, expiresAt: now + (options.challengeTtlSeconds ?? 60) * 1000 }
          : undefined,
      ...(challenge ? { assertionNonce: challenge } : {}),
      resumptionTokens: [],
      createdAt: now,
      ttlSeconds: ttl,
      // Unauthenticated, it lives only long enough to authenticate (docs/architecture.md,
      // "Bounds").
      expiresAt: now + (pending ? Math.min(ttl, pendingTtl) : ttl) * 1000,
    };
    const { session: withToken, token: resumptionToken } = issueToken(created, identity);
    let session = withToken;
    // MLS (docs/wmp-profile.md, "MLS": initiators join by Welcome): the responder creates the
    // group, adding the initiator's key package when one came, and answers with the GroupInfo and
    // the Welcome.
    let welcome: string | undefined;
    if (security.mode !== 'tls' && options.mls && security.cipher_suite !== undefined) {
      const group = await options.mls.createGroup({
        sessionId: session.id,
        cipherSuite: security.cipher_suite,
        initiator: identity ?? sender,
        keyPackage: keyPackageOf(raw),
      });
      session = { ...session, security: { ...security, mls_group_info: group.groupInfo } };
      welcome = group.welcome;
    }
    try {
      await s.store.create(session);
    } catch (e) {
      if (welcome !== undefined || session.security.mls_group_info !== undefined) {
        void Promise.resolve(options.mls?.deleteGroup?.(session.id)).catch(() => undefined);
      }
      throw e;
    }
    s.bind(ctx.connection, session.id, identity);
    if (identity !== undefined) options.hooks?.authenticated?.(session, identity, ctx.connection, []);

    const result: Record<string, unknown> = {
      wmp: { version, session_id: session.id },
      capabilities,
      security: session.security,
      resumption_token: resumptionToken,
      ...(challenge ? { challenge } : {}),
      ...(pending ? { auth_required: true } : {}),
      ...(welcome ? { mls_welcome: welcome } : {}),
    };
    if (typeof params.nonce === 'string' && options.identity) {
      // Mutual authentication (core §4.4.5): sign the initiator's nonce for this session.
      result.auth = await responderAuth(options.identity, params.nonce, session.id, now);
    }
    return result;
  };

  const authenticate: RequestHandler<WmpContext> = async (raw, ctx) => {
    const params = raw as ParamsOf<'wmp.session.authenticate'>;
    const id = ctx.session!.id;
    const authenticator = s.authenticators.get(params.auth.type);
    if (!authenticator) throw new NotAuthorizedError({ reason: 'unsupported auth type' });
    const now = s.now();
    // A challenge answers one attempt, right or wrong (core §4.4.7): it is taken atomically
    // before the check, so two attempts racing with one challenge cannot both see it.
    let challenge: ChallengeRecord | undefined;
    if (authenticator.needsChallenge) {
      const take = takeChallenge(now);
      if ((await s.store.update(id, take.change)) === undefined) throw new SessionNotFoundError(UNKNOWN_SESSION);
      challenge = take.result();
    }
    checkSenderScheme(s.authenticators, params.wmp.sender, params.auth.type);
    const { identity, how } = authOutcome(
      await authenticator.authenticate({
        auth: params.auth,
        sessionId: id,
        sender: params.wmp.sender,
        challenge,
        timestamp: params.wmp.timestamp,
        now,
      }),
      params.auth.type,
    );
    // After the identity is proven (nothing is fetched for a stranger), before the session is
    // authenticated: a policy that requires assertions authenticates no session without one.
    const assertions = await checkPresented(options.identityAssertions, params.wmp.identity_assertions, {
      session: ctx.session!,
      presenter: identity,
      now,
      mls: options.mls,
      required: true,
    });
    const session = await s.store.update(id, authenticated(identity, now, how));
    if (session === undefined) throw new SessionNotFoundError(UNKNOWN_SESSION);
    s.bind(ctx.connection, id, identity);
    options.hooks?.authenticated?.(session, identity, ctx.connection, assertions);
    return {
      wmp: { version: session.version, session_id: id },
      authenticated: true,
      participant_id: identity,
      identity,
    };
  };

  const resume: RequestHandler<WmpContext> = async (raw, ctx) => {
    const params = raw as ParamsOf<'wmp.session.resume'>;
    const now = s.now();
    s.checkBind(ctx.connection, params.session_id);
    // Consumed and rotated in one atomic change: a token resumes once, however many race for it.
    const use = resumeWith(params.resumption_token, params.wmp.sender, now);
    let session: SessionRecord | undefined;
    try {
      session = await s.store.update(params.session_id, use.change);
    } catch (e) {
      if (e instanceof SessionExpiredError) await s.store.delete(params.session_id);
      throw e;
    }
    if (session === undefined) throw new SessionNotFoundError(UNKNOWN_SESSION);
    const { token, identity } = use.result();
    s.bind(ctx.connection, session.id, identity);
    // Over HTTP a dropped connection is not seen: the HTTP session used before ends now.
    s.supersede(session.id, identity, ctx.connection);
    const lastReceived = params.last_received_id ?? params.last_message_id;
    const missed = (await options.hooks?.resume?.(session, identity, lastReceived, ctx.connection)) ?? 0;
    // Active flows: re-send their latest progress (core §6.2.1), after the reply.
    const flows = s.flows.active(session.id).filter((f) => f.lastProgress);
    if (flows.length > 0) {
      const resumed = session;
      setTimeout(() => {
        for (const f of flows)
          void s
            .seal(resumed, 'wmp.flow.progress', withWmp(resumed, f.lastProgress!))
            .then((sealed) => sealed && ctx.connection.peer.notify('wmp.flow.progress', sealed, resumed.id))
            .catch(() => undefined);
      }, 0);
    }
    return {
      wmp: { version: session.version, session_id: session.id },
      resumed: true,
      resumption_token: token,
      missed_messages: missed,
      capabilities: session.capabilities,
      security: session.security,
    };
  };

  /**
   * wmp.session.join (ours, docs/architecture.md, "Group sessions"): enter a session as one of its
   * listed participants. The identity is the one this connection authenticated (on any session),
   * or, when the responder does not require authentication, the claimed `wmp.sender`.
   */
  const join: RequestHandler<WmpContext> = async (raw, ctx) => {
    const params = raw as ParamsOf<'wmp.session.join'>;
    const proven = [...ctx.connection.sessions.values()].map((b) => b.identity).find((i) => i !== undefined);
    const identity = proven ?? (requireAuth ? undefined : params.wmp.sender);
    if (identity === undefined) throw new NotAuthorizedError({ reason: 'authenticate before joining' });
    if (params.wmp.sender !== undefined && params.wmp.sender !== identity)
      throw new NotAuthorizedError({ reason: 'sender is not the authenticated identity' });
    s.checkBind(ctx.connection, params.session_id);
    const entry = joined(identity, proven !== undefined, s.now());
    const session = await s.store.update(params.session_id, entry.change);
    if (session === undefined) throw new SessionNotFoundError(UNKNOWN_SESSION);
    s.bind(ctx.connection, session.id, identity);
    await options.hooks?.joined?.(session, identity, ctx.connection);
    return {
      wmp: { version: session.version, session_id: session.id },
      capabilities: session.capabilities,
      security: session.security,
      resumption_token: entry.result(),
      // Who else is in it: a joiner knows only the id it was given.
      participants: [...session.participants],
    };
  };

  const close: RequestHandler<WmpContext> = async (_raw, ctx) => {
    await closeSessionAs(s, ctx.connection, ctx.session!, ctx.sender);
  };

  return {
    'wmp.session.create': create,
    'wmp.session.authenticate': authenticate,
    'wmp.session.resume': resume,
    'wmp.session.join': join,
    'wmp.session.close': close,
  };
}

/**
 * Only the creator changes a group session's capabilities or security (docs/architecture.md,
 * "Group sessions"): -31002 for others.
 */
export function checkCreator(session: SessionRecord, sender: string | undefined): void {
  if (isGroup(session) && sender !== undefined && sender !== session.initiator) {
    throw new NotAuthorizedError({ reason: 'only the creator changes a group session' });
  }
}

/** -32602 naming the first listed participant `problem` finds malformed. */
function checkParticipants(
  listed: readonly string[] | undefined,
  problem: ((identifier: string) => string | undefined) | undefined,
): void {
  if (listed === undefined || problem === undefined) return;
  for (const [i, identifier] of listed.entries()) {
    const found = problem(identifier);
    if (found !== undefined) throw new InvalidParamsError({ reason: `participants.${i}: ${found}` });
  }
}

const MAX_KEY_PACKAGE_CHARS = 16 * 1024;

/** The initiator's `mls_key_package` (ours, beside `security`): base64url, bounded, else -32602. */
export function keyPackageOf(raw: unknown): string | undefined {
  const value = (raw as { mls_key_package?: unknown }).mls_key_package;
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length > MAX_KEY_PACKAGE_CHARS || !/^[A-Za-z0-9_-]+$/.test(value)) {
    throw new InvalidParamsError({ reason: 'mls_key_package: must be base64url, at most 16 KiB' });
  }
  return value;
}

export function withWmp(session: SessionRecord, params: Record<string, unknown>): Record<string, unknown> {
  return { wmp: { version: session.version, session_id: session.id }, ...params };
}
