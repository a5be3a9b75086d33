// An `IdentityPresenter` over SD-JWT VCs the holder keeps: it presents a credential with the
// claims the application chose, and after a refusal (when the application allows) with the ones
// the relying party asked for, in a format it accepts.
import type { AssertionRefusal, IdentityPresenter } from '../assertions/presenter.js';
import { credentialInfo, type HolderKey, sdJwtAssertion } from './holder.js';
import { SD_JWT_FORMATS } from './policy.js';

export interface SdJwtPresenterOptions {
  readonly holder: HolderKey;
  /** The SD-JWT VCs held (as issued, compact); the first that can disclose what is asked is used. */
  readonly credentials: readonly string[];
  /** Claims disclosed at first. */
  readonly disclose: readonly string[];
  /**
   * Whether to open again disclosing what a refusal asks for (`requiredClaims`): the
   * application's (or its user's) consent. Default: never.
   */
  readonly allowRetry?: (refused: AssertionRefusal) => boolean | Promise<boolean>;
  readonly trustHints?: readonly Readonly<Record<string, unknown>>[];
}

export function sdJwtPresenter(options: SdJwtPresenterOptions): IdentityPresenter {
  return {
    async present(session, refused) {
      const wanted = [...new Set([...options.disclose, ...(refused?.requiredClaims ?? [])])];
      let chosen: { credential: string; disclosable: readonly string[] } | undefined;
      for (const credential of options.credentials) {
        const info = await credentialInfo(credential).catch(() => undefined);
        if (info === undefined) continue;
        const candidate = { credential, disclosable: info.disclosable };
        chosen ??= candidate;
        if (wanted.every((c) => info.disclosable.includes(c))) {
          chosen = candidate;
          break;
        }
      }
      if (chosen === undefined) return [];
      const accepted = refused?.acceptedFormats.find((f) => SD_JWT_FORMATS.includes(f));
      return [
        await sdJwtAssertion(chosen.credential, {
          disclose: wanted.filter((c) => chosen.disclosable.includes(c)),
          nonce: session.challenge,
          audience: session.sessionId,
          holder: options.holder,
          ...(accepted ? { format: accepted } : {}),
          ...(options.trustHints ? { trustHints: options.trustHints } : {}),
        }),
      ];
    },
    async retry(refused) {
      if (refused.reason !== 'insufficient_claims' && refused.reason !== 'unsupported_format') return false;
      return (await options.allowRetry?.(refused)) ?? false;
    },
  };
}
