import { coreMethods, type MethodRegistry, MlsError, WmpError } from '@wmp/jsonrpc-envelope';
import { clearFieldsOf } from './policy.js';

type Params = Record<string, unknown>;

/**
 * The MLS group a session encrypts with, as this package needs it. `MlsGroup` of @wmp/mls-bridge
 * is one as it is; the session engine never imports ts-mls, so applications without MLS never
 * load it.
 */
export interface SessionCipher {
  /** Our identity (DID) in the group: the `wmp.sender` of what we encrypt. */
  readonly identity: string;
  /** The group's current epoch. */
  readonly epoch: number;
  /** The MLS group id (base64url): an audience identity assertions may name (core §5.6). */
  readonly groupId?: string;
  /**
   * Core §5.2: `params` minus `wmp`, as UTF-8 JSON, encrypted into `ciphertext`; returns
   * `{ wmp: { ...wmp, encrypted: true, epoch }, ciphertext }`.
   */
  encryptParams(params: Params): Promise<Params>;
  /**
   * The reverse: the decrypted content merged with the clear `wmp`. Throws a -31004 `MlsError`
   * when it does not decrypt, or when `wmp.sender` is not the member who signed it.
   */
  decryptParams(params: Params, options?: { readonly checkSender?: boolean }): Promise<Params>;
}

/**
 * How an initiator enters the group a responder creates for the session: it sends a key package
 * with `wmp.session.create` (or `wmp.capability.update`), the responder adds it and answers with
 * a Welcome. With @wmp/mls-bridge:
 * `{ keyPackage: (await client.createKeyPackage()).keyPackage, join: (w) => MlsGroup.join(client, w) }`.
 */
export interface MlsJoin {
  /** A key package (base64url MLSMessage) of the cipher suite offered. */
  readonly keyPackage: string;
  /** Joins from the responder's Welcome (base64url) and returns the group. */
  join(welcome: string): Promise<SessionCipher>;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Encrypts a content message's params (core §5.2). The routing fields of its method (`to` of a
 * deliver) are also copied in the clear, so a relay can route what it cannot read; the encrypted
 * copy is the authoritative one.
 */
export async function sealParams(
  cipher: SessionCipher,
  method: string,
  params: Params,
  methods: MethodRegistry = coreMethods,
): Promise<Params> {
  const sealed = await cipher.encryptParams(params);
  const clear: Params = {};
  for (const field of clearFieldsOf(method, methods)) if (params[field] !== undefined) clear[field] = params[field];
  return { ...sealed, ...clear };
}

/**
 * Decrypts encrypted params: the authenticated MLS sender must be `sender` (the `wmp.sender` the
 * message claims, or the identity the connection proved), and a clear routing field must equal its
 * encrypted copy. Every failure is a -31004 `MlsError` with `data.reason`.
 */
export async function openParams(
  cipher: SessionCipher,
  method: string,
  params: Params,
  sender: string | undefined,
  methods: MethodRegistry = coreMethods,
): Promise<Params> {
  if (sender === undefined) throw new MlsError({ reason: 'sender_mismatch' });
  const wmp = (params.wmp ?? {}) as Params;
  let opened: Params;
  try {
    opened = await cipher.decryptParams({ wmp: { ...wmp, sender }, ciphertext: params.ciphertext });
  } catch (e) {
    // A cipher's own refusals are -31004 already; anything else is reported without its text.
    if (e instanceof WmpError) throw e;
    throw new MlsError({ reason: 'decrypt_failed' });
  }
  for (const field of clearFieldsOf(method, methods)) {
    if (params[field] !== undefined && !sameJson(params[field], opened[field])) {
      throw new MlsError({ reason: 'routing_mismatch' });
    }
  }
  return opened;
}
