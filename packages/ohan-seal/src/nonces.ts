// Request nonces are single-use values: the box records them in @wmp/jcs-signing's one replay
// cache contract (`useOnce`), counted against the signer's and the source's shares (see
// request.ts). These are that contract's own classes, under the names the box's callers know.
export {
  MemoryReplayCache as MemoryNonceCache,
  type MemoryReplayCacheOptions as MemoryNonceCacheOptions,
  type ReplayCache as NonceCache,
  ReplayCacheFullError as NonceCacheFullError,
} from '@wmp/jcs-signing';
