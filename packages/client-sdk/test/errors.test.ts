// The SDK's local errors are one family: each a ClientSdkError with a stable code and a fixed
// message.
import { describe, expect, it } from 'vitest';
import { expectErrorFamily } from '../../../test-support/error-family.js';
import {
  ClientSdkError,
  ClientStoreError,
  GroupError,
  Identity,
  IdentityError,
  MailboxError,
  WmpClientError,
} from '../src/index.js';

describe('the SDK errors', () => {
  it('all extend ClientSdkError, each with its stable code and a fixed message', () => {
    expectErrorFamily(ClientSdkError, [
      [new WmpClientError('ERR_CLIENT_URL'), 'ERR_CLIENT_URL', 'unusable URL (ws:, wss:, http: or https:)'],
      [new GroupError('ERR_GROUP_CLOSED'), 'ERR_GROUP_CLOSED', 'group closed'],
      [new IdentityError(), 'ERR_IDENTITY_INVALID', 'not a valid identity'],
      [new MailboxError('network', { relay: 'https://box.example' }), 'network', 'the box could not be reached'],
      [new ClientStoreError('ERR_STORE_CLOSED'), 'ERR_STORE_CLOSED', 'the store is closed'],
    ]);
  });

  it('are what the SDK throws: a malformed identity is a ClientSdkError that does not repeat it', () => {
    const json = { version: 1, did: 'did:key:z6MkSecret', signing_seed: 'Secret', enc_secret: 'Secret' } as never;
    expect(() => Identity.fromJSON(json)).toThrow(ClientSdkError);
    expect(() => Identity.fromJSON(json)).toThrow(expect.objectContaining({ code: 'ERR_IDENTITY_INVALID' }));
    expect(() => Identity.fromJSON(json)).not.toThrow(/Secret/);
  });
});
