import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WmpServer } from '@wmp/session';
import { afterAll, beforeAll } from 'vitest';
import { describeVectors, rawClientFrom } from '../../session/test/vector-harness.js';
import { connectUnixSocket, listenUnixSocket, type UnixSocketServer } from '../src/node.js';

// Every vector through a real WmpServer over a real Unix domain socket.
let dir: string;
const listeners = new Map<WmpServer, Promise<UnixSocketServer>>();
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'wmp-unix-'));
});
afterAll(async () => {
  for (const l of listeners.values()) await (await l).close();
  await rm(dir, { recursive: true, force: true });
});

let n = 0;
describeVectors('a Unix domain socket', async (server) => {
  let listening = listeners.get(server);
  if (!listening) {
    listening = listenUnixSocket({
      path: join(dir, 'run', `s${n++}.sock`),
      onTransport: (t) => void server.connect(t),
    });
    listeners.set(server, listening);
  }
  const client = await connectUnixSocket((await listening).path);
  const raw = rawClientFrom(
    (m) => client.send(m as never),
    () => client.close(),
  );
  client.onmessage = (frame) => raw.push(typeof frame === 'string' ? frame : new TextDecoder().decode(frame));
  await client.start();
  return raw;
});
