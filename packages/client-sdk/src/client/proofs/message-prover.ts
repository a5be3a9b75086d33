import { jcsBytes, type MessageSigner, signedContentOf, signMessage } from '@wmp/jcs-signing';
import type { Capabilities } from '@wmp/jsonrpc-envelope';
import type { ClientIdentity } from '../types.js';
import { messageSignerOf, type TimestampSource, tsaClientOf } from './lazy-pki.js';
import type { ProofRequest, SignatureOptions, TimestampOptions } from './types.js';

/** Capabilities under which every message of a session is signed (core §5.4; the evidence profile requires it). */
const SIGNING_CAPABILITIES = ['non_repudiation', 'evidence'] as const;

/** Whether a session with these capabilities wants its messages signed. */
export function sessionSigns(capabilities: Capabilities): boolean {
  return SIGNING_CAPABILITIES.some((c) => c in capabilities);
}

type Params = Record<string, unknown>;

/**
 * What the client adds to what it sends (core §5.4, §5.5): a non-repudiation signature where
 * the session or the call asks for one (EdDSA with the did:key, ES256 or EdDSA with the `x5c`
 * of an X.509 identity), and an RFC 3161 token from a TSA over the same content. Both cover the
 * content only (params minus `wmp`), so they are made once and kept across a send's retries, and
 * they are made before a session encrypts (sign, then encrypt).
 */
export class MessageProver {
  readonly #identity: ClientIdentity;
  readonly #signatures: SignatureOptions;
  readonly #timestamp: TimestampOptions | undefined;
  #x509Signer: Promise<MessageSigner> | undefined;
  /** TSA clients by options object (the client's, or one a call passed). */
  readonly #tsas = new WeakMap<TimestampOptions, Promise<TimestampSource>>();

  constructor(identity: ClientIdentity, signatures: SignatureOptions = {}, timestamp?: TimestampOptions) {
    this.#identity = identity;
    this.#signatures = signatures;
    this.#timestamp = timestamp;
  }

  /** The TSA a message gets a token from, if any. */
  #tsaFor(request: ProofRequest): TimestampOptions | undefined {
    const asked = request.timestamp;
    if (asked === false) return undefined;
    if (asked === true || asked === undefined) return this.#timestamp?.url === undefined ? undefined : this.#timestamp;
    return asked.url === undefined ? undefined : asked;
  }

  /** Whether anything would be added to a message on a session with `capabilities`. */
  wants(capabilities: Capabilities, request: ProofRequest = {}): boolean {
    const sign = request.sign === true || this.#signatures.always === true || sessionSigns(capabilities);
    return sign || this.#tsaFor(request) !== undefined;
  }

  /**
   * `params` (content and `wmp`) with `wmp.signature` and `wmp.timestamp_token` as asked; the
   * same object when nothing is. Rejects with the TSA's `TsaClientError` when a token was asked
   * for and could not be had (nothing is sent then).
   */
  async prove(
    method: string,
    params: Params,
    capabilities: Capabilities,
    request: ProofRequest = {},
    signal?: AbortSignal,
  ): Promise<Params> {
    if (!this.wants(capabilities, request)) return params;
    const sign = request.sign === true || this.#signatures.always === true || sessionSigns(capabilities);
    const tsa = this.#tsaFor(request);
    let out = params;
    if (tsa !== undefined) {
      const content = jcsBytes(signedContentOf({ jsonrpc: '2.0', method, params }));
      const { token } = await (await this.#tsaClient(tsa)).timestamp(content, signal ? { signal } : {});
      const wmp = (params.wmp ?? {}) as Params;
      out = { ...params, wmp: { ...wmp, timestamp_token: token } };
    }
    if (sign) {
      const signed = await signMessage({ jsonrpc: '2.0', method, params: out }, await this.#signer());
      out = signed.params as Params;
    }
    return out;
  }

  #signer(): Promise<MessageSigner> {
    const x509 = this.#identity.x509;
    if (x509 === undefined) return Promise.resolve(this.#identity.keypair);
    this.#x509Signer ??= messageSignerOf(x509);
    return this.#x509Signer;
  }

  #tsaClient(options: TimestampOptions): Promise<TimestampSource> {
    let client = this.#tsas.get(options);
    if (client === undefined) {
      client = tsaClientOf(options.url!, options.anchors, options.timeoutMs);
      this.#tsas.set(options, client);
    }
    return client;
  }
}
