// biome-ignore-all lint/suspicious/noConsole: this example prints the header
// Prints an `Authorization: OHAN-Sig` value for one request, for curl (see docs/box-api.md).
// Usage: SEED=<32-byte hex Ed25519 seed> tsx --conditions=@wmp/source examples/sign-header.ts ORIGIN METHOD TARGET [BODY]
import { fromHex, keypairFromSeed } from '@wmp/jcs-signing';
import { signRequest } from '@wmp/ohan-seal';

const [origin, method, target, body] = process.argv.slice(2);
if (!process.env.SEED || !origin || !method || !target)
  throw new Error('usage: SEED=hex sign-header ORIGIN METHOD TARGET [BODY]');
const signer = keypairFromSeed(fromHex(process.env.SEED));
console.log(await signRequest({ signer, origin, method, target, body }));
