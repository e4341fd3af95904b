import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { errorMessage } from '../../functions/src/core/errors';

/**
 * The HTTP side of a Google API stand-in (functions-api-standin.ts,
 * storage-api-standin.ts): gcloud is pointed at it as its API endpoint and
 * its proxy. Each request's whole body goes to `route`; a route that throws
 * answers 500 in the APIs' error shape. A CONNECT is gcloud reaching for a
 * real Google host over HTTPS, which a stand-in never answers: refused and
 * recorded in `unexpected`.
 */
export async function listenStandIn(
  route: (req: IncomingMessage, body: Buffer, res: ServerResponse) => void,
  unexpected: string[],
): Promise<{ readonly server: Server; readonly url: string }> {
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        route(req, Buffer.concat(chunks), res);
      } catch (err) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 500, message: errorMessage(err) } }));
      }
    });
  });
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    unexpected.push(`CONNECT ${req.url ?? '?'}`);
    socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
}
