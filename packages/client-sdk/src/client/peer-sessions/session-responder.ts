import { NotAuthorizedError } from '@wmp/jsonrpc-envelope';
import {
  type Authenticator,
  approvalFlow,
  authOutcome,
  builtInResolvers,
  FlowManager,
  type FlowType,
  type Peer,
  proofSignerOf,
  ResponderBridge,
  type ResponderIdentity,
  type SessionRecord,
  signedChallengeAuthenticator,
  signFlow,
} from '@wmp/session';
import type { FlowConsent } from '../built-in-flows.js';
import type { MessageProver } from '../proofs/message-prover.js';
import type { MessageProofs } from '../proofs/types.js';
import { IncomingSession } from './incoming-session.js';
import { RoutedInbox } from './routed-inbox.js';
import type { ServeSessionsOptions } from './types.js';

/** Offered by default to the sessions others open to this client. */
export const DEFAULT_SERVED_CAPABILITIES = Object.freeze({ messaging: {}, flows: {}, resolve: {} });

export interface SessionResponderDeps {
  readonly identity: ResponderIdentity;
  /** This client's identifier (what its signatures are bound to). */
  readonly sender: string;
  /** Signs and timestamps what the sessions send. */
  readonly prover: MessageProver;
  /** The checks of a received message's signature, relay chain and token. */
  check(params: Record<string, unknown>): Promise<MessageProofs>;
  /** What `endpoint` answers for this client itself (its relay), when known. */
  readonly ownEndpoint?: Record<string, unknown>;
  /** Acknowledges a message to the relay (it stored it for us). */
  ack(messageId: string): void;
  report(error: unknown): void;
  /** An initiator authenticated: its session, for the application. */
  opened(session: IncomingSession): void;
}

/** Each authenticator, refusing an identity the application does not accept (-31002 as the answer). */
function accepting(
  authenticators: Readonly<Record<string, Authenticator>>,
  accept: ServeSessionsOptions['accept'],
): Record<string, Authenticator> {
  if (accept === undefined) return { ...authenticators };
  const out: Record<string, Authenticator> = {};
  for (const [type, authenticator] of Object.entries(authenticators)) {
    out[type] = {
      ...authenticator,
      async authenticate(attempt) {
        const result = await authenticator.authenticate(attempt);
        if (!(await accept(authOutcome(result, type).identity))) {
          throw new NotAuthorizedError({ reason: 'not accepted' });
        }
        return result;
      },
    };
  }
  return out;
}

/**
 * The flow types an SDK responder runs: the application's, and the built-in `approval` and `sign`
 * decided by its consent callbacks (this client reviews and signs; with no callback, not offered:
 * nobody else could act on them).
 */
function servedFlowTypes(options: ServeSessionsOptions, identity: ResponderIdentity): Record<string, FlowType> {
  const consent: FlowConsent = options.consent ?? {};
  return {
    message: {},
    ...(consent.approval ? { approval: approvalFlow({ review: consent.approval, approver: identity.id }) } : {}),
    ...(consent.sign ? { sign: signFlow({ consent: consent.sign, signer: proofSignerOf(identity) }) } : {}),
    ...options.flows,
  };
}

/**
 * This client as the responder of sessions others open to it through the relay (transport §6.2):
 * a `ResponderBridge` on the client's connection, moved to each new connection, whose server has
 * the application's capabilities, flows and resolvers; each session an initiator authenticated on
 * becomes an `IncomingSession`.
 */
export class SessionResponder {
  readonly #bridge: ResponderBridge;
  readonly #sessions: Map<string, IncomingSession>;

  private constructor(bridge: ResponderBridge, sessions: Map<string, IncomingSession>) {
    this.#bridge = bridge;
    this.#sessions = sessions;
  }

  static async start(options: ServeSessionsOptions, deps: SessionResponderDeps): Promise<SessionResponder> {
    const sessions = new Map<string, IncomingSession>();
    // Made by the session's first deliver or its authentication, whichever comes first.
    const inboxes = new Map<string, RoutedInbox>();
    const inboxOf = (id: string) => {
      let inbox = inboxes.get(id);
      if (inbox === undefined) {
        inbox = new RoutedInbox(deps.ack, deps.report, (params) => deps.check(params));
        inboxes.set(id, inbox);
      }
      return inbox;
    };
    const resolvers =
      options.resolvers ??
      builtInResolvers({
        ...(options.fetch ? { fetch: options.fetch } : {}),
        localEndpoint: (id) => (id === deps.identity.id ? deps.ownEndpoint : undefined),
      });
    const bridge = await ResponderBridge.start({
      capabilities: options.capabilities ?? {
        ...DEFAULT_SERVED_CAPABILITIES,
        resolve: { supported_types: Object.keys(resolvers) },
      },
      flows: new FlowManager({ builtIns: false, types: servedFlowTypes(options, deps.identity) }),
      resolvers,
      ...(options.identityAssertions ? { identityAssertions: options.identityAssertions } : {}),
      authenticators: accepting(
        options.authenticators ?? { signed_challenge: signedChallengeAuthenticator() },
        options.accept,
      ),
      identity: deps.identity,
      ...(options.maxSessions ? { maxSessions: options.maxSessions } : {}),
      hooks: {
        authenticated: (session: SessionRecord, initiator: string, _connection, assertions) => {
          const incoming = new IncomingSession(
            bridge.server,
            { id: session.id, initiator, capabilities: session.capabilities },
            inboxOf(session.id),
            { sender: deps.sender, prover: deps.prover },
            assertions,
          );
          sessions.set(session.id, incoming);
          deps.opened(incoming);
        },
        deliver: (params, ctx) => {
          const id = ctx.session?.id;
          if (id !== undefined) void inboxOf(id).message(params as Record<string, unknown>);
          return undefined;
        },
        sessionEnded: (session) => {
          inboxes.delete(session.id);
          const incoming = sessions.get(session.id);
          sessions.delete(session.id);
          incoming?.ended();
        },
      },
    });
    return new SessionResponder(bridge, sessions);
  }

  /** The sessions an initiator authenticated on, now. */
  get sessions(): readonly IncomingSession[] {
    return [...this.#sessions.values()];
  }

  /** Takes the frames of its sessions from this connection on (called for every new connection). */
  attach(peer: Peer): void {
    this.#bridge.attach(peer);
  }

  async close(): Promise<void> {
    for (const id of [...this.#sessions.keys()]) await this.#bridge.server.closeSession(id).catch(() => undefined);
    await this.#bridge.close();
  }
}
