import type { Connection } from '@wmp/session';
import { describe, expect, it } from 'vitest';
import { Presence } from '../src/relay/presence/presence.js';
import type { Endpoint } from '../src/relay/support/endpoint.js';

/** Presence's events, written down: identities up and down, endpoints reachable again. */
function events(reached: string[] = [], came: string[] = []) {
  return {
    identityUp: (id: string) => void came.push(`+${id}`),
    identityDown: (id: string) => void came.push(`-${id}`),
    reachableAgain: (e: Endpoint) => void reached.push(e.identity),
  };
}

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
    const reached: string[] = [];
    const came: string[] = [];
    const presence = new Presence(4, events(reached, came), (e) => gone.push(`${e.identity}@${e.connection.id}`));
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
    expect(came).toEqual(['+did:a', '+did:b', '+did:c']);
    presence.connectionClosed(one);
    expect(gone.sort()).toEqual(['did:a@1', 'did:b@1', 'did:c@1']);
    // did:a is still here on the other connection: only the identities gone from this node are down.
    expect(came.slice(3).sort()).toEqual(['-did:b', '-did:c']);
    expect(presence.size).toBe(1);
    expect(presence.isOnline('did:a')).toBe(true);
    expect(presence.isOnline('did:b')).toBe(false);
    presence.connectionClosed(two);
    presence.connectionClosed(two); // a second close finds nothing
    expect(presence.size).toBe(0);
    expect(gone).toHaveLength(4);
    expect(came.slice(5)).toEqual(['-did:a']);
  });

  it('reaches the one identity of a connection that has only one', () => {
    const reached: string[] = [];
    const presence = new Presence(4, events(reached));
    const one = connection(7);
    presence.ensure('did:a', one, 0);
    one.transport.onreachable?.();
    expect(reached).toEqual(['did:a']);
  });

  it('holds an identity to maxConnectionsPerIdentity, from one endpoint to a map of them', () => {
    const presence = new Presence(2, events());
    presence.ensure('did:a', connection(1), 0);
    presence.ensure('did:a', connection(2), 0);
    expect(presence.ensure('did:a', connection(3), 0, true)).toBeUndefined();
    expect(() => presence.ensure('did:a', connection(3), 0)).toThrow('Rate limited');
    expect([...presence.endpoints('did:a')].map((e) => e.connection.id)).toEqual([1, 2]);
  });
});
