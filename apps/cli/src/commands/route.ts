// wmp route <identifier>: how the relay would route a message to someone
// (docs/federation-profile.md): kept at this relay, or forwarded to their home relay, and which
// rule said so.
import type { CommandSpec } from '../command.js';
import { liveRelayOption, retriesOption, withClient } from '../live.js';
import { printable } from './common.js';

const SOURCES: Readonly<Record<string, string>> = {
  route: "the relay's static routes",
  'well-known': "the domain's /.well-known/wmp-configuration",
  card: "the recipient's OHAN card",
  default: 'no rule matched',
  federation_off: 'federation is off at this relay',
};

const route: CommandSpec = {
  path: ['route'],
  summary: 'show where the relay would route a message to an identifier',
  description: [
    'Asks the relay (ohan.relay.resolve) where the identifier is at home: "here" (the relay keeps',
    'messages for it until it connects) or the URL of another relay, which the relay forwards to,',
    "and which rule decided: a static route, the domain's well-known document, or an OHAN card.",
  ],
  args: [
    { name: 'identifier', kind: 'identifier', help: 'a did:key, did:jwk, did:web, https:// or x509:san: identifier' },
  ],
  options: { relay: liveRelayOption, retries: retriesOption },
  examples: ['wmp route did:key:z6Mk... --relay http://127.0.0.1:8080', 'wmp --json route did:web:example.com:bob'],
  async run(ctx) {
    const identity = ctx.args.identifier as string;
    await withClient(ctx, async (client, relay) => {
      const answer = (await client.request('ohan.relay.resolve', { identity }, { signal: ctx.signal })) as {
        home: string;
        source: string;
      };
      ctx.out.result({ identity, relay, home: answer.home, source: answer.source }, () => {
        const how = SOURCES[answer.source] ?? answer.source;
        return answer.home === 'here'
          ? `${printable(identity)} is kept at ${relay} (${how})`
          : `${printable(identity)} is forwarded to ${printable(answer.home)} (${how})`;
      });
    });
  },
};

export const routeCommands: readonly CommandSpec[] = [route];
