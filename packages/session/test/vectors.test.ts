import { InMemoryTransport } from '../src/index.js';
import { describeVectors, rawClientFrom } from './vector-harness.js';

// The same vectors run over WebSocket, HTTP+SSE and stdio in @wmp/transports.
describeVectors('an in-memory connection', async (server) => {
  const [client, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const raw = rawClientFrom(
    (m) => client.send(m as never),
    () => client.close(),
  );
  client.onmessage = (frame) => raw.push(String(frame));
  await client.start();
  return raw;
});
