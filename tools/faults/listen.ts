import type { Server } from 'node:net';

/** Starts `server` on a free loopback port and returns its `host:port`. */
export async function listenOnLoopback(server: Pick<Server, 'once' | 'listen' | 'address'>): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy has no TCP address');
  return `127.0.0.1:${address.port}`;
}
