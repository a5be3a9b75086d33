import type { Connection } from '@wmp/session';
import { describe, expect, it } from 'vitest';
import { type Endpoint, Presence } from '../src/relay/presence/presence.js';

/** What Presence reads of a connection: its id, whether its peer closed, its transport's onreachable. */
function connection(id: number): Connection & { readonly transport: { onreachable?: () => void } } {
  const transport: { onreachable?: () => void } = {};
  return { id, peer: { closed: false, transport }, transport } as unknown as Connection & {
    readonly transport: { onreachable?: () => void };
  };
}

describe('Presence per connection', () => {
  it('keeps one identity or several on a connection, reaches and drops them all with it', () => {
    const gone: string[] = [];
    const presence = new Presence(4, (e) => gone.push(`${e.identity}@${e.connection.id}`));
    const reached: string[] = [];
    presence.onreachable = (e: Endpoint) => reached.push(e.identity);
    const one = connection(1);
    const two = connection(2);
    presence.ensure('did:a', one, 0);
    presence.ensure('did:a', two, 0);
    presence.ensure('did:b', one, 0);
    presence.ensure('did:c', one, 0);
    presence.ensure('did:b', one, 0); // already there: nothing new
    expect(presence.size).toBe(4);
    one.transport.onreachable?.();
    expect(reached).toEqual(['did:a', 'did:b', 'did:c']);
    presence.connectionClosed(one);
    expect(gone.sort()).toEqual(['did:a@1', 'did:b@1', 'did:c@1']);
    expect(presence.size).toBe(1);
    expect(presence.isOnline('did:a')).toBe(true);
    expect(presence.isOnline('did:b')).toBe(false);
    presence.connectionClosed(two);
    presence.connectionClosed(two); // a second close finds nothing
    expect(presence.size).toBe(0);
    expect(gone).toHaveLength(4);
  });

  it('reaches the one identity of a connection that has only one', () => {
    const presence = new Presence(4);
    const reached: string[] = [];
    presence.onreachable = (e: Endpoint) => reached.push(e.identity);
    const one = connection(7);
    presence.ensure('did:a', one, 0);
    one.transport.onreachable?.();
    expect(reached).toEqual(['did:a']);
  });

  it('holds an identity to maxConnectionsPerIdentity, from one endpoint to a map of them', () => {
    const presence = new Presence(2);
    presence.ensure('did:a', connection(1), 0);
    presence.ensure('did:a', connection(2), 0);
    expect(presence.ensure('did:a', connection(3), 0, true)).toBeUndefined();
    expect(() => presence.ensure('did:a', connection(3), 0)).toThrow('Rate limited');
    expect([...presence.endpoints('did:a')].map((e) => e.connection.id)).toEqual([1, 2]);
  });
});
