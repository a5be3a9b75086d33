import type * as v from 'valibot';
import { MethodRegistry } from './method-registry.js';
import { evidenceMethods } from './schemas/evidence.js';
import { flowMethods } from './schemas/flow.js';
import { messagingMethods } from './schemas/messaging.js';
import type { MethodSpec } from './schemas/method-spec.js';
import { mlsMethods } from './schemas/mls.js';
import type { ohanMethods } from './schemas/ohan.js';
import { relayMethods } from './schemas/relay.js';
import { resolveMethods } from './schemas/resolve.js';
import { sessionMethods } from './schemas/session.js';

/**
 * The WMP methods, each with its kind, schemas and rules (tables §6.1, §8; docs/architecture.md,
 * "Session engine").
 */
export const wmpMethods = {
  ...sessionMethods,
  ...messagingMethods,
  ...flowMethods,
  ...resolveMethods,
  ...relayMethods,
  ...mlsMethods,
  ...evidenceMethods,
} as const satisfies Record<string, MethodSpec>;

/** The WMP core table as a registry: what every endpoint knows before it adds its own methods. */
export const coreMethods: MethodRegistry = new MethodRegistry(wmpMethods).freeze();

type KnownMethods = typeof wmpMethods & typeof ohanMethods;
/** The methods this project defines, core and OHAN: the names `ParamsOf`/`ResultOf` type. */
export type MethodName = keyof KnownMethods;
export type ParamsOf<M extends MethodName> = v.InferOutput<KnownMethods[M]['params']>;
export type ResultOf<M extends MethodName> = KnownMethods[M]['result'] extends v.GenericSchema
  ? v.InferOutput<KnownMethods[M]['result'] & v.GenericSchema>
  : never;
/** Method names by a readable key, for code that prefers `Method.MessageDeliver` to a string. */
export const Method = {
  SessionCreate: 'wmp.session.create',
  SessionAuthenticate: 'wmp.session.authenticate',
  SessionResume: 'wmp.session.resume',
  SessionJoin: 'wmp.session.join',
  SessionClose: 'wmp.session.close',
  CapabilityUpdate: 'wmp.capability.update',
  CapabilityList: 'wmp.capability.list',
  MessageDeliver: 'wmp.message.deliver',
  MessageAck: 'wmp.message.ack',
  MessageStatus: 'wmp.message.status',
  MessagePoll: 'wmp.message.poll',
  MessageFetch: 'wmp.message.fetch',
  MessageNotice: 'wmp.message.notice',
  MessageAccept: 'wmp.message.accept',
  MessageReject: 'wmp.message.reject',
  FlowStart: 'wmp.flow.start',
  FlowProgress: 'wmp.flow.progress',
  FlowAction: 'wmp.flow.action',
  FlowComplete: 'wmp.flow.complete',
  FlowError: 'wmp.flow.error',
  FlowCancel: 'wmp.flow.cancel',
  CredentialNotification: 'wmp.credential.notification',
  Resolve: 'wmp.resolve',
  RelayRegister: 'wmp.relay.register',
  MlsGroupCreate: 'wmp.mls.group.create',
  MlsGroupJoin: 'wmp.mls.group.join',
  MlsGroupAdd: 'wmp.mls.group.add',
  MlsGroupRemove: 'wmp.mls.group.remove',
  MlsGroupUpdate: 'wmp.mls.group.update',
  EvidenceNotify: 'wmp.evidence.notify',
  EvidenceAck: 'wmp.evidence.ack',
  KeyPackagePublish: 'ohan.mls.keypackage.publish',
  KeyPackageFetch: 'ohan.mls.keypackage.fetch',
  RelayResolve: 'ohan.relay.resolve',
} as const satisfies Record<string, MethodName>;

/** Whether `method` is in the WMP core table (not an application's or OHAN's own). */
export function isKnownMethod(method: string): method is keyof typeof wmpMethods {
  return coreMethods.has(method);
}
