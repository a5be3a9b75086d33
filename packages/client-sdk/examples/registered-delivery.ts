// biome-ignore-all lint/suspicious/noConsole: this example prints what it does
import { type ConsignmentNotice, connect, Identity, type ReceivedMessage, type WmpClient } from '@wmp/client-sdk/node';
import { signMandate } from '@wmp/jcs-signing';
import { createRelay } from '@wmp/relay-server/node';

// One relay, in memory: it is Bob's registered delivery service (consignment, scheduling).
const relay = createRelay({ timings: { scheduleIntervalMs: 100 } });
const { url } = await relay.listen();
const [alice, bob] = [Identity.generate(), Identity.generate()];
const aliceClient = await connect(url, { identity: alice });
const bobClient = await connect(url, { identity: bob });

const next = <T>(client: WmpClient, event: 'message' | 'notice') =>
  new Promise<T>((resolve) => {
    const off = client.on(event, (value) => {
      off();
      resolve(value as T);
    });
  });

// A consented, signed message: Bob first gets a notice (who, what, the content's hash; no content).
const noticed = next<ConsignmentNotice>(bobClient, 'notice');
await aliceClient.send(bob.did, 'the terms', { sign: true, consignmentMode: 'consented_signed', subject: 'contract' });
const notice = await noticed;
console.log(`notice: ${notice.mode} "${notice.subject}" from ${notice.from === alice.did ? 'alice' : '?'}`);

// Bob accepts; for consented_signed the SDK signs the acceptance over the hash (his receipt).
const arrived = next<ReceivedMessage>(bobClient, 'message');
console.log('accept:', await bobClient.accept(notice));
const message = await arrived;
const signedBy = message.signature?.valid && message.signature.signer === alice.did ? 'alice' : 'nobody';
console.log(`bob got: ${message.body} (signed by ${signedBy})`);

// Scheduled: the relay holds it until then.
const later = next<ReceivedMessage>(bobClient, 'message');
const due = Date.now() + 300;
await aliceClient.send(bob.did, 'happy new year', { deliverAfter: new Date(due) });
console.log(`bob got: ${(await later).body} (not before it was due: ${Date.now() >= due})`);

// Carol's assistant sends for her with a mandate she signed; Bob sees Carol as the sender.
const [carol, assistant] = [Identity.generate(), Identity.generate()];
const credential = await signMandate(
  {
    delegate: assistant.did,
    principal: carol.did,
    scope: ['submit'],
    valid_until: new Date(Date.now() + 3600_000).toISOString(),
  },
  carol.keypair,
);
const assistantClient = await connect(url, { identity: assistant });
const delegated = next<ReceivedMessage>(bobClient, 'message');
await assistantClient.send(bob.did, 'the invoice', {
  onBehalfOf: { principal: carol.did, authorization: { type: 'mandate', credential } },
});
console.log(`bob got: ${(await delegated).body} (from ${(await delegated).from === carol.did ? 'carol' : '?'})`);

for (const c of [aliceClient, bobClient, assistantClient]) await c.close();
await relay.close();
