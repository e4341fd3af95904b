import * as net from 'node:net';

/**
 * Asks the OS for a currently unused TCP port on 127.0.0.1.
 *
 * The port is only known to be free at the moment it is returned: another
 * process may grab it before the caller binds it. The harness therefore
 * treats "address already in use" from an emulator as retryable.
 *
 * @returns a port number in the ephemeral range
 */
export function freePort(): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const server = net.createServer();
    // Do not let a pending probe keep the process alive.
    server.unref();
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0, exclusive: true }, () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error(`unexpected listen address: ${String(address)}`));
        return;
      }
      const { port } = address;
      server.close((err) => (err === undefined ? resolve(port) : reject(err)));
    });
  });
}
