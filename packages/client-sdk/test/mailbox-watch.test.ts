import { describe, expect, it } from 'vitest';
import type { MailMessage } from '../src/index.js';
import { deliver, mailboxTestbed, waitFor } from './mailbox-relays.js';

const bed = mailboxTestbed();
const fast = { initialDelayMs: 10, maxDelayMs: 50 };

function bodies(messages: readonly MailMessage[]): unknown[] {
  return messages.map((m) => (m.envelope as unknown as { params: { body: unknown } }).params.body);
}

describe('Mailbox.watch', () => {
  it('reconnects when the box ends the stream and resumes after the last event (Last-Event-ID)', async () => {
    const r = await bed.relay();
    const resumedFrom: (string | null)[] = [];
    const recording: typeof fetch = (input, init) => {
      if (String(input).endsWith('/events/stream')) resumedFrom.push(new Headers(init?.headers).get('last-event-id'));
      return fetch(input, init);
    };
    const bob = await bed.party([r], { fetch: recording });
    const alice = await bed.party([r]);
    const card = (await bob.mailbox.card())!;
    const received: MailMessage[] = [];
    const watch = await bob.mailbox.watch({ onMessage: (m) => void received.push(m), reconnect: fast });
    bed.onCleanup(() => watch.close());
    await alice.mailbox.send(card, deliver(alice.identity, bob.identity, 'one'));
    await waitFor(() => received.length === 1);
    await waitFor(async () => (await r.count()) === 0);

    await r.box.close(); // ends every open stream; the box still serves
    await alice.mailbox.send(card, deliver(alice.identity, bob.identity, 'two'));
    await waitFor(() => received.length === 2);
    expect(bodies(received)).toEqual(['one', 'two']);
    expect(r.box.openStreams).toBe(1);
    expect(resumedFrom).toEqual([null, '1']);
  });

  it('retries a message whose handler threw, after reconnecting, and reports the error', async () => {
    const r = await bed.relay();
    const bob = await bed.party([r]);
    const alice = await bed.party([r]);
    const failure = new Error('busy');
    const calls: unknown[] = [];
    const errors: unknown[] = [];
    const watch = await bob.mailbox.watch({
      onMessage: (m) => {
        calls.push(bodies([m])[0]);
        if (calls.length === 1) throw failure;
      },
      onError: (e) => errors.push(e),
      reconnect: fast,
    });
    bed.onCleanup(() => watch.close());
    await alice.mailbox.send((await bob.mailbox.card())!, deliver(alice.identity, bob.identity, 'retry me'));
    await waitFor(() => calls.length === 2);
    await waitFor(async () => (await r.count()) === 0);
    expect(calls).toEqual(['retry me', 'retry me']);
    expect(errors).toEqual([failure]);
  });

  it('reopens a stream that stays silent past idleTimeoutMs, reporting a network error', async () => {
    const r = await bed.relay({ box: { keepAliveMs: 600_000 } });
    const bob = await bed.party([r]);
    const alice = await bed.party([r]);
    const errors: unknown[] = [];
    const received: MailMessage[] = [];
    const watch = await bob.mailbox.watch({
      onMessage: (m) => void received.push(m),
      onError: (e) => errors.push(e),
      idleTimeoutMs: 100,
      reconnect: fast,
    });
    bed.onCleanup(() => watch.close());
    await waitFor(() => errors.length >= 2);
    expect(errors[0]).toMatchObject({ name: 'MailboxError', code: 'network', relay: r.origin });
    await alice.mailbox.send((await bob.mailbox.card())!, deliver(alice.identity, bob.identity, 'after idling'));
    await waitFor(() => received.length === 1);
  });

  it('reports a relay it cannot reach, keeps watching the others, and stops on its signal', async () => {
    const [up, down] = [await bed.relay(), await bed.relay()];
    const bob = await bed.party([up, down]);
    const alice = await bed.party([up]);
    await down.close();
    const errors: { code?: string; relay?: string }[] = [];
    const received: MailMessage[] = [];
    const abort = new AbortController();
    const watch = await bob.mailbox.watch({
      onMessage: (m) => void received.push(m),
      onError: (e) => errors.push(e as { code?: string; relay?: string }),
      signal: abort.signal,
      reconnect: fast,
    });
    expect(errors[0]).toMatchObject({ code: 'network', relay: down.origin });
    await alice.mailbox.send((await bob.mailbox.card())!, deliver(alice.identity, bob.identity, 'via up'));
    await waitFor(() => received.length === 1);
    abort.abort();
    await watch.closed;
    await waitFor(() => up.box.openStreams === 0);
  });
});
