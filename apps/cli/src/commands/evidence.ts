// wmp evidence <message-id>: the evidence records a relay keeps of a message you sent or received
// (wmp-tables §9, registered delivery), read from its repository with a request signed by your
// key, each record's relay signature (and timestamp token, when it has one) checked here.
import type { ReceivedEvidence } from '@wmp/client-sdk';
import type { CommandSpec } from '../command.js';
import { NotFoundError } from '../errors.js';
import { liveRelayOption, retriesOption, withClient } from '../live.js';
import { sessionChoice, tsaAnchorsOption } from '../registered-session.js';
import { printable, shortDid } from './common.js';

/** Pages read at most (100 records each): a message has a few records per recipient. */
const MAX_PAGES = 10;

/** A record as printed: JSON value (with the record, JWS and token to keep) and human line. */
export function evidenceItem(e: ReceivedEvidence) {
  const value = {
    evidence_id: e.id ?? null,
    event_type: e.eventType ?? null,
    event_time: e.time ?? null,
    recipient: e.recipient ?? null,
    issuer: e.issuer ?? null,
    signature: e.signature,
    timestamp: e.timestamp
      ? { valid: e.timestamp.valid, time: e.timestamp.time?.toISOString() ?? null, reason: e.timestamp.reason ?? null }
      : null,
    record: e.record,
    signed_evidence: e.signedEvidence ?? null,
    timestamp_token: e.timestampToken ?? null,
  };
  const to = e.recipient ? ` to ${shortDid(e.recipient)}` : '';
  const signed = e.signature.valid ? 'signature valid' : `SIGNATURE INVALID (${printable(e.signature.reason ?? '')})`;
  const token = e.timestamp === undefined ? '' : e.timestamp.valid ? ', timestamped' : ', token not verified';
  const by = e.issuer ? ` by ${shortDid(e.issuer)}` : '';
  const human = `${printable(e.time ?? '?')}  ${printable(e.eventType ?? '?')}${to}  (${signed}${by}${token})`;
  return { value, human };
}

const evidence: CommandSpec = {
  path: ['evidence'],
  summary: 'show the evidence records the relay keeps of a message',
  description: [
    "Reads the relay's evidence repository (GET /evidence, signed with your key): the records of the",
    'message that name you (its sender; a recipient), each signed by the relay that witnessed the',
    'event (submission, forward, delivery, retrieval, ...), checked here. Records exist for messages',
    "sent on a session under evidence (wmp send --evidence, or the SDK's evidence capability).",
    "With --tsa-anchors, each record's RFC 3161 token is checked against them (else it shows as",
    '"token not verified"). None is exit 3.',
  ],
  args: [{ name: 'message-id', kind: 'text', help: 'the relay id of the message (msg-...)' }],
  options: { relay: liveRelayOption, 'tsa-anchors': tsaAnchorsOption, retries: retriesOption },
  examples: [
    'wmp evidence msg-0123456789abcdef0123456789abcdef',
    'wmp --json evidence msg-... --relay https://relay.example',
    'wmp evidence msg-... --tsa-anchors tsa-roots.pem',
  ],
  async run(ctx) {
    const messageId = (ctx.args['message-id'] as string).trim();
    // A read needs no routing: unregistered, the relay hands this process none of your messages.
    const session = { ...(await sessionChoice(ctx, false)), register: false };
    await withClient(
      ctx,
      async (client, relay) => {
        const records: ReceivedEvidence[] = [];
        let continuationToken: string | undefined;
        for (let page = 0; page < MAX_PAGES; page++) {
          const read = await client.evidence({
            messageId,
            ...(continuationToken === undefined ? {} : { continuationToken }),
            signal: ctx.signal,
          });
          records.push(...read.records);
          continuationToken = read.continuationToken;
          if (continuationToken === undefined) break;
        }
        if (records.length === 0) {
          throw new NotFoundError(
            `no evidence of message ${printable(messageId.slice(0, 200))} at ${relay} names you`,
            'Records are kept for messages sent under evidence, at the relays they passed; ask the relay ' +
              'of the sender (or of the recipient) with --relay.',
            { message_id: messageId, relay },
          );
        }
        const items = records.map(evidenceItem);
        ctx.out.result({ message_id: messageId, relay, records: items.map((i) => i.value) }, () => [
          `message  ${printable(messageId)} (${records.length} record${records.length === 1 ? '' : 's'} at ${relay})`,
          ...items.map((i) => `  ${i.human}`),
        ]);
      },
      session,
    );
  },
};

export const evidenceCommands: readonly CommandSpec[] = [evidence];
