import type * as v from 'valibot';
import { evidenceMethods } from './schemas/evidence.js';
import { flowMethods } from './schemas/flow.js';
import { messagingMethods } from './schemas/messaging.js';
import type { MethodSpec } from './schemas/method-spec.js';
import { mlsMethods } from './schemas/mls.js';
import { relayMethods } from './schemas/relay.js';
import { resolveMethods } from './schemas/resolve.js';
import { sessionMethods } from './schemas/session.js';

/** Every method this project knows, with its kind and schemas (tables §6.1, §8; DESIGN §3). */
export const methodSpecs = {
  ...sessionMethods,
  ...messagingMethods,
  ...flowMethods,
  ...resolveMethods,
  ...relayMethods,
  ...mlsMethods,
  ...evidenceMethods,
} as const satisfies Record<string, MethodSpec>;

export type MethodName = keyof typeof methodSpecs;
export type ParamsOf<M extends MethodName> = v.InferOutput<(typeof methodSpecs)[M]['params']>;
export type ResultOf<M extends MethodName> = (typeof methodSpecs)[M]['result'] extends v.GenericSchema
  ? v.InferOutput<(typeof methodSpecs)[M]['result'] & v.GenericSchema>
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

export function isKnownMethod(method: string): method is MethodName {
  return Object.hasOwn(methodSpecs, method);
}
