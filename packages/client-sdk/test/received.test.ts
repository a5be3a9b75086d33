// How a `wmp.message.status` reads for the application (pure parsing, no connection): the reason
// a relay gives for a `dropped` comes through as it came, from `reason` or from `data.reason`.
import { describe, expect, it } from 'vitest';
import { statusOf } from '../src/client/received.js';

describe('statusOf', () => {
  it('keeps the reason of a dropped status, from reason or data.reason', () => {
    expect(statusOf({ message_id: 'm1', status: 'dropped', reason: 'peer refused (-31002)' })).toMatchObject({
      messageId: 'm1',
      status: 'dropped',
      reason: 'peer refused (-31002)',
    });
    expect(
      statusOf({ message_id: 'm2', status: 'dropped', data: { reason: 'federation_sender_homed_here' } }),
    ).toMatchObject({ reason: 'federation_sender_homed_here' });
    expect(statusOf({ message_id: 'm3', status: 'delivered' })?.reason).toBeUndefined();
    expect(statusOf({ message_id: 'm4', status: 'lost' })).toBeUndefined();
  });
});
