import * as net from 'node:net';

/** Resolves with the error code of a TCP connect to `host` ("ip:port"), or 'connected'. */
export function connectResult(host: string): Promise<string> {
  const [ip, port] = host.split(':');
  return new Promise((resolve) => {
    const socket = net.connect({ host: ip, port: Number(port) });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}
