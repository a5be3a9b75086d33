import { createChallenge } from '@wmp/jcs-signing';
import {
  InvalidParamsError,
  NotAuthorizedError,
  type ParamsOf,
  SessionExpiredError,
  SessionNotFoundError,
} from '@wmp/jsonrpc-envelope';
import { responderAuth } from '../auth/responder.js';
import { checkSenderScheme } from '../auth/schemes.js';
import type { WmpContext } from '../context.js';
import { newSessionId } from '../ids.js';
import { negotiateCapabilities, negotiateSecurity, negotiateVersion, WMP_VERSION } from '../negotiate.js';
import type { RequestHandler } from '../peer.js';
import type { ServerServices } from '../services.js';
import { isExpired, type SessionRecord } from '../session-model.js';
import { consumeResumptionToken, issueResumptionToken } from '../tokens.js';

const MAX_PARTICIPANTS = 256;

/** wmp.session.create / authenticate / resume / close (core §4). */
export function sessionHandlers(s: ServerServices): Record<string, RequestHandler<WmpContext>> {
  const options = s.options;
  const supportedVersions = options.supportedVersions ?? [WMP_VERSION];
  const requireAuth = options.requireAuthentication ?? true;

  const create: RequestHandler<WmpContext> = async (raw, ctx) => {
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
    const participants = [...new Set([...(sender ? [sender] : []), ...(params.participants ?? [])])].slice(
      0,
      MAX_PARTICIPANTS,
    );

    // A sender whose scheme no authenticator proves is refused before anything is stored.
    if (params.auth || requireAuth) checkSenderScheme(s.authenticators, sender, params.auth?.type);
    // Inline authentication (bearer and other challenge-free types) happens right here.
    let identity: string | undefined;
    if (params.auth) {
      const authenticator = s.authenticators.get(params.auth.type);
      if (!authenticator || authenticator.needsChallenge)
        throw new NotAuthorizedError({ reason: 'unsupported inline auth type' });
      identity = await authenticator.authenticate({
        auth: params.auth,
        sessionId: '',
        sender,
        challenge: undefined,
        timestamp: params.wmp.timestamp,
        now,
      });
    }
    const pending = identity === undefined && requireAuth;
    const challenge = identity === undefined ? createChallenge() : undefined;
    const session: SessionRecord = {
      id: newSessionId(),
      version,
      initiator: identity ?? sender,
      participants: identity && !participants.includes(identity) ? [identity, ...participants] : participants,
      capabilities,
      security,
      state: pending ? 'pending' : 'active',
      authenticated: identity ? [identity] : [],
      challenge: challenge
        ? { value: challenge, expiresAt: now + (options.challengeTtlSeconds ?? 60) * 1000 }
        : undefined,
      resumptionTokens: [],
      createdAt: now,
      expiresAt: now + ttl * 1000,
    };
    // MLS (DESIGN: initiators join by Welcome): the responder creates the group, adding the
    // initiator's key package when one came, and answers with the GroupInfo and the Welcome.
    let welcome: string | undefined;
    if (security.mode !== 'tls' && options.mls && security.cipher_suite !== undefined) {
      const group = await options.mls.createGroup({
        sessionId: session.id,
        cipherSuite: security.cipher_suite,
        initiator: identity ?? sender,
        keyPackage: keyPackageOf(raw),
      });
      session.security = { ...security, mls_group_info: group.groupInfo };
      welcome = group.welcome;
    }
    const resumptionToken = issueResumptionToken(session, identity);
    await s.store.put(session);
    s.bind(ctx.connection, session.id, identity);

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
    const session = ctx.session!;
    const authenticator = s.authenticators.get(params.auth.type);
    if (!authenticator) throw new NotAuthorizedError({ reason: 'unsupported auth type' });
    const now = s.now();
    const challenge = session.challenge && session.challenge.expiresAt > now ? session.challenge : undefined;
    // A challenge answers one attempt, right or wrong (core §4.4.7: single use). It is cleared
    // before the check and stored with the outcome: one write per attempt, not two.
    if (authenticator.needsChallenge) session.challenge = undefined;
    let identity: string;
    try {
      checkSenderScheme(s.authenticators, params.wmp.sender, params.auth.type);
      identity = await authenticator.authenticate({
        auth: params.auth,
        sessionId: session.id,
        sender: params.wmp.sender,
        challenge,
        timestamp: params.wmp.timestamp,
        now,
      });
      if (session.participants.length > 0 && !session.participants.includes(identity)) {
        throw new NotAuthorizedError({ reason: 'not a participant of this session' });
      }
    } catch (e) {
      if (authenticator.needsChallenge) await s.store.put(session);
      throw e;
    }
    if (!session.authenticated.includes(identity)) session.authenticated.push(identity);
    session.state = 'active';
    const current = session.resumptionTokens.find((t) => t.identity === undefined);
    if (current) current.identity = identity; // the token issued at create now resumes this identity
    await s.store.put(session);
    s.bind(ctx.connection, session.id, identity);
    return {
      wmp: { version: session.version, session_id: session.id },
      authenticated: true,
      participant_id: identity,
      identity,
    };
  };

  const resume: RequestHandler<WmpContext> = async (raw, ctx) => {
    const params = raw as ParamsOf<'wmp.session.resume'>;
    const session = await s.store.get(params.session_id);
    if (!session || session.state === 'closed') throw new SessionNotFoundError();
    const now = s.now();
    if (isExpired(session, now)) {
      await s.store.delete(session.id);
      throw new SessionExpiredError();
    }
    const entry = consumeResumptionToken(session, params.resumption_token);
    if (!entry) throw new NotAuthorizedError({ reason: 'invalid resumption token' });
    const sender = params.wmp.sender;
    if (sender !== undefined && entry.identity !== undefined && sender !== entry.identity) {
      throw new NotAuthorizedError({ reason: 'token belongs to another identity' });
    }
    const token = issueResumptionToken(session, entry.identity);
    await s.store.put(session);
    s.bind(ctx.connection, session.id, entry.identity);
    const lastReceived = params.last_received_id ?? params.last_message_id;
    const missed = (await options.hooks?.resume?.(session, entry.identity, lastReceived, ctx.connection)) ?? 0;
    // Active flows: re-send their latest progress (core §6.2.1), after the reply.
    const flows = s.flows.active(session.id).filter((f) => f.lastProgress);
    if (flows.length > 0) {
      setTimeout(() => {
        for (const f of flows)
          void s
            .seal(session, 'wmp.flow.progress', withWmp(session, f.lastProgress!))
            .then((sealed) => sealed && ctx.connection.peer.notify('wmp.flow.progress', sealed, session.id))
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
   * wmp.session.join (DESIGN §3, ours): enter a session as one of its listed participants. The
   * identity is the one this connection authenticated (on any session), or, when the responder
   * does not require authentication, the claimed `wmp.sender`.
   */
  const join: RequestHandler<WmpContext> = async (raw, ctx) => {
    const params = raw as ParamsOf<'wmp.session.join'>;
    const session = await s.store.get(params.session_id);
    if (!session || session.state === 'closed') throw new SessionNotFoundError();
    if (isExpired(session, s.now())) throw new SessionExpiredError();
    const proven = [...ctx.connection.sessions.values()].map((b) => b.identity).find((i) => i !== undefined);
    const identity = proven ?? (requireAuth ? undefined : params.wmp.sender);
    if (identity === undefined) throw new NotAuthorizedError({ reason: 'authenticate before joining' });
    if (params.wmp.sender !== undefined && params.wmp.sender !== identity)
      throw new NotAuthorizedError({ reason: 'sender is not the authenticated identity' });
    if (!session.participants.includes(identity))
      throw new NotAuthorizedError({ reason: 'not a participant of this session' });
    if (!session.authenticated.includes(identity) && proven !== undefined) session.authenticated.push(identity);
    const token = issueResumptionToken(session, identity);
    await s.store.put(session);
    s.bind(ctx.connection, session.id, identity);
    await options.hooks?.joined?.(session, identity, ctx.connection);
    return {
      wmp: { version: session.version, session_id: session.id },
      capabilities: session.capabilities,
      security: session.security,
      resumption_token: token,
      // Who else is in it: a joiner knows only the id it was given.
      participants: [...session.participants],
    };
  };

  const close: RequestHandler<WmpContext> = async (_raw, ctx) => {
    const session = ctx.session!;
    session.state = 'closed';
    await s.store.delete(session.id);
    s.ended(session);
  };

  return {
    'wmp.session.create': create,
    'wmp.session.authenticate': authenticate,
    'wmp.session.resume': resume,
    'wmp.session.join': join,
    'wmp.session.close': close,
  };
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
