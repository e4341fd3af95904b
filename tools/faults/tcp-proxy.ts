import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { listenOnLoopback } from './listen';

/**
 * A TCP proxy in front of an emulator, for outage tests, the demo and the
 * benchmarks: the real client talks to the real emulator through it, and the
 * test decides when the network "breaks".
 *
 * - `forward`: pass bytes both ways (normal operation);
 * - `refuse`: accept and reset at once (a host that is down);
 * - `blackhole`: accept and never answer (a hung backend; only deadlines help).
 *
 * Switching mode closes every open connection, as a real outage would.
 */
export type ProxyMode = 'forward' | 'refuse' | 'blackhole';

export interface TcpProxy {
  /** `127.0.0.1:PORT` to give clients instead of the target. */
  readonly host: string;
  mode(): ProxyMode;
  setMode(mode: ProxyMode): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: string, initial: ProxyMode = 'forward'): Promise<TcpProxy> {
  const [targetHost, targetPort] = splitHost(target);
  let mode = initial;
  const open = new Set<Socket>();
  const track = (socket: Socket): void => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    socket.on('error', () => socket.destroy());
  };

  const server: Server = createServer((client) => {
    track(client);
    if (mode === 'refuse') {
      client.resetAndDestroy();
      return;
    }
    if (mode === 'blackhole') return; // held open, never answered
    const upstream = createConnection({ host: targetHost, port: targetPort });
    track(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  const host = await listenOnLoopback(server);

  return {
    host,
    mode: () => mode,
    setMode(next) {
      mode = next;
      for (const socket of open) socket.destroy();
    },
    async close() {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function splitHost(hostPort: string): [string, number] {
  const index = hostPort.lastIndexOf(':');
  const port = Number(hostPort.slice(index + 1));
  if (index <= 0 || !Number.isInteger(port)) throw new Error(`expected HOST:PORT, got ${JSON.stringify(hostPort)}`);
  return [hostPort.slice(0, index), port];
}
