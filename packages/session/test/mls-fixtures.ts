// Real MLS for the session tests: @wmp/mls-bridge groups behind the session's structural
// interfaces (SessionCipher, MlsJoin, MlsSessionProvider), and a tap that records raw frames.
import { generateKeypair, type Keypair } from '@wmp/jcs-signing';
import { MlsBridgeError, MlsClient, MlsGroup, verifyKeyPackage } from '@wmp/mls-bridge';
import type { MlsJoin, MlsSessionProvider, Transport } from '../src/index.js';

export interface Member {
  readonly keypair: Keypair;
  readonly client: MlsClient;
  /** A fresh key package and how to join from the Welcome made for it. */
  join(): Promise<MlsJoin>;
}

export async function member(keypair: Keypair = generateKeypair()): Promise<Member> {
  const client = await MlsClient.create({ identity: keypair });
  return {
    keypair,
    client,
    async join() {
      const { keyPackage } = await client.createKeyPackage();
      return { keyPackage, join: (welcome) => MlsGroup.join(client, welcome) };
    },
  };
}

/** A responder's MLS side: one group per session, the initiator added from its key package. */
export interface ResponderMls extends MlsSessionProvider {
  readonly groups: Map<string, MlsGroup>;
  readonly member: Member;
}

export async function responderMls(): Promise<ResponderMls> {
  const self = await member();
  const groups = new Map<string, MlsGroup>();
  return {
    groups,
    member: self,
    async createGroup({ sessionId, cipherSuite, initiator, keyPackage }) {
      if (cipherSuite !== self.client.cipherSuite) throw new MlsBridgeError('unsupported_cipher_suite');
      const group = await MlsGroup.create(self.client);
      let welcome: string | undefined;
      if (keyPackage !== undefined) {
        // Only the identity the initiator claims may enter through its key package.
        if ((await verifyKeyPackage(keyPackage, { cipherSuite: self.client.cipherSuite })).identity !== initiator) {
          throw new MlsBridgeError('credential_mismatch');
        }
        welcome = (await group.add(keyPackage)).welcome;
        await group.confirmCommit(); // we order our own group's commits
      }
      groups.set(sessionId, group);
      return { groupInfo: await group.groupInfo(), welcome };
    },
    cipherOf: (sessionId) => groups.get(sessionId),
    deleteGroup: (sessionId) => {
      groups.delete(sessionId);
    },
  };
}

/** Records every frame `transport` receives, as the text that came over the connection. */
class Tap implements Transport {
  onmessage?: NonNullable<Transport['onmessage']>;
  onclose?: NonNullable<Transport['onclose']>;
  onerror?: NonNullable<Transport['onerror']>;
  readonly maxMessageBytes?: number;

  constructor(
    private readonly inner: Transport,
    private readonly frames: string[],
  ) {
    if (inner.maxMessageBytes !== undefined) this.maxMessageBytes = inner.maxMessageBytes;
  }

  start(): Promise<void> {
    this.inner.onmessage = (frame, extra) => {
      this.frames.push(typeof frame === 'string' ? frame : new TextDecoder().decode(frame));
      this.onmessage?.(frame, extra);
    };
    this.inner.onclose = () => this.onclose?.();
    this.inner.onerror = (e) => this.onerror?.(e);
    return this.inner.start();
  }

  send(...args: Parameters<Transport['send']>): Promise<void> {
    return this.inner.send(...args);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

export function tap(transport: Transport, frames: string[]): Transport {
  return new Tap(transport, frames);
}

/** The frames carrying `method`, parsed. */
export function framesOf(frames: readonly string[], method: string): Array<Record<string, any>> {
  return frames.map((f) => JSON.parse(f) as Record<string, any>).filter((m) => m.method === method);
}
