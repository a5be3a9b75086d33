// biome-ignore-all lint/suspicious/noConsole: this example prints what it does
import { generateKeypair } from '@wmp/jcs-signing';
import { MlsBridgeError, MlsClient, MlsGroup } from '@wmp/mls-bridge';

/** The -31004 error code and `data.reason` of a refused operation. */
async function refusal(operation: Promise<unknown>): Promise<string> {
  try {
    await operation;
    return 'accepted (unexpected)';
  } catch (e) {
    if (!(e instanceof MlsBridgeError)) throw e;
    return `${e.code} ${e.reason}`;
  }
}

// Each participant's Ed25519 key is its MLS signature key; its did:key is in its credential.
const alice = await MlsClient.create({ identity: generateKeypair() });
const bob = await MlsClient.create({ identity: generateKeypair() });

// Bob publishes a key package (ohan.mls.keypackage.publish); Alice fetches it and adds him.
const published = await bob.createKeyPackage();
const aliceGroup = await MlsGroup.create(alice);
const add = await aliceGroup.add(published.keyPackage);
// Alice sends add.commit and add.welcome through the relay. Once the relay accepted the commit
// (the first commit of an epoch wins), she confirms it; a refused one she would discard.
await aliceGroup.confirmCommit();
const bobGroup = await MlsGroup.join(bob, add.welcome!);
console.log('members:', bobGroup.members.length, 'epoch:', bobGroup.epoch);

// WMP content encryption (core §5.2): params minus `wmp` are encrypted, `wmp` stays in the clear.
const wire = await aliceGroup.encryptParams({
  wmp: { version: '0.1', session_id: 'ses-4f9a2c7d', sender: alice.identity },
  to: [bob.identity],
  content_type: 'text/plain',
  body: 'Hello Bob',
});
console.log('on the wire:', Object.keys(wire).join(' '), '| body visible:', JSON.stringify(wire).includes('Hello'));
console.log('bob reads:', (await bobGroup.decryptParams(wire)).body);

const reply = await bobGroup.encryptParams({
  wmp: { version: '0.1', session_id: 'ses-4f9a2c7d', sender: bob.identity },
  to: [alice.identity],
  content_type: 'text/plain',
  body: 'Hi Alice',
});
console.log('alice reads:', (await aliceGroup.decryptParams(reply)).body);

// Persistence: save() after each operation (or pass { persist }), restore() after a restart.
const bobAgain = await MlsGroup.restore(bobGroup.save(), bob);
const later = await aliceGroup.encrypt(new TextEncoder().encode('still there?'));
const read = await bobAgain.decrypt(later.ciphertext);
console.log(
  'after restart:',
  new TextDecoder().decode(read.plaintext),
  '| from alice:',
  read.sender === alice.identity,
);
console.log('replayed:', await refusal(bobAgain.decrypt(later.ciphertext)));

// Removal is a real Remove proposal: Bob cannot read what Alice sends afterwards.
const removal = await aliceGroup.remove(bob.identity);
await aliceGroup.confirmCommit();
await bobAgain.process(removal.commit);
const secret = await aliceGroup.encrypt(new TextEncoder().encode('after bob left'));
console.log('bob after removal:', await refusal(bobAgain.decrypt(secret.ciphertext)));
