// For the examples only: relays with an OHAN box, started in this process on 127.0.0.1 (as
// `npm start` runs one). Real applications use the origins of deployed relays instead.
import { BOX_API_PREFIX, createBoxApp, createRelay, MemoryRelayStores, mountBoxApp } from '@wmp/relay-server/node';

export interface LocalRelays {
  /** The relays' public origins, e.g. `http://127.0.0.1:41234`. */
  readonly origins: string[];
  close(): Promise<void>;
}

/** Starts `count` relays whose boxes are directories and ask strangers for 8-bit stamps. */
export async function startLocalRelays(count: number): Promise<LocalRelays> {
  const closers: (() => Promise<void>)[] = [];
  const origins: string[] = [];
  for (let i = 0; i < count; i++) {
    const relay = createRelay({
      store: (limits) => new MemoryRelayStores({ ...limits, box: { directory: true, strangerBits: 8 } }),
    });
    let boxFetch: ((request: Request) => Response | Promise<Response>) | undefined;
    relay.app.all(`${BOX_API_PREFIX}/*`, (c) => (boxFetch ? boxFetch(c.req.raw) : c.text('not ready', 503)));
    const { url } = await relay.listen();
    const box = createBoxApp({ store: relay.stores.box, origin: url, directory: true });
    const mounted = mountBoxApp(box);
    boxFetch = (request) => mounted.fetch(request);
    origins.push(url);
    closers.push(async () => {
      await box.close();
      await relay.close();
    });
  }
  return { origins, close: async () => void (await Promise.all(closers.map((c) => c()))) };
}
