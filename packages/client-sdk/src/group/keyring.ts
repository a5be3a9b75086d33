import { b64urlDecode, b64urlEncode } from '@wmp/jcs-signing';
import { MlsClient, type MlsIdentity, type PublishedKeyPackage } from '@wmp/mls-bridge';
import type { ClientStore } from '../store/store.js';
import { fromMls, GroupError } from './errors.js';
import { KEY_PACKAGES_STORE_KEY, SerialWriter } from './record.js';

/** Unused key packages kept locally at most (each is a private key waiting for its Welcome). */
export const MAX_LOCAL_KEY_PACKAGES = 500;

/**
 * The MLS side of one identity in one store: its mls-bridge `MlsClient`, whose unused key packages
 * (private keys included) are written to `group/key-packages` before they are published and
 * whenever a Welcome uses one up. One per store and identity in a process, shared by all its
 * groups: a Welcome for any group may use any key package.
 */
export class Keyring {
  readonly client: MlsClient;

  private constructor(client: MlsClient) {
    this.client = client;
  }

  static of(store: ClientStore, identity: MlsIdentity): Promise<Keyring> {
    let byDid = keyrings.get(store);
    if (!byDid) {
      byDid = new Map();
      keyrings.set(store, byDid);
    }
    const known = byDid.get(identity.did);
    if (known) return known;
    const made = Keyring.#load(store, identity);
    byDid.set(identity.did, made);
    made.catch(() => byDid.delete(identity.did));
    return made;
  }

  static async #load(store: ClientStore, identity: MlsIdentity): Promise<Keyring> {
    const writer = new SerialWriter(store, KEY_PACKAGES_STORE_KEY);
    const text = await store.get(KEY_PACKAGES_STORE_KEY);
    let saved: Uint8Array | undefined;
    try {
      saved = text === undefined ? undefined : b64urlDecode(text);
    } catch (e) {
      throw new GroupError('ERR_GROUP_STATE', { cause: e });
    }
    try {
      const client = await MlsClient.create({
        identity,
        ...(saved ? { keyPackages: saved } : {}),
        persistKeyPackages: (bytes) => writer.write(() => b64urlEncode(bytes)),
      });
      return new Keyring(client);
    } catch (e) {
      throw fromMls(e);
    }
  }

  /** `count` new key packages, stored (with their private keys) before they are returned. */
  async createKeyPackages(count: number): Promise<PublishedKeyPackage[]> {
    if (this.client.pendingKeyPackages.length + count > MAX_LOCAL_KEY_PACKAGES) {
      throw new GroupError('ERR_GROUP_TOO_MANY_KEY_PACKAGES');
    }
    const out: PublishedKeyPackage[] = [];
    for (let i = 0; i < count; i++) out.push(await this.client.createKeyPackage());
    return out;
  }
}

const keyrings = new WeakMap<ClientStore, Map<string, Promise<Keyring>>>();
