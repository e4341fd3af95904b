import type { Request, Response } from '@google-cloud/functions-framework';

type HttpFunction = (req: Request, res: Response) => Promise<void>;

/** `process.domain`: set by node:domain while a domain is entered; not in @types/node's Process. */
type WithDomain = NodeJS.Process & { domain?: { exit(): void } | null };

/**
 * Runs an HTTP function outside the node:domain the Functions Framework
 * opens for every request.
 *
 * Why: once a domain is active, Node tags every promise and async resource
 * created inside it (a property and a destroy hook each). The Firestore and
 * gRPC clients create dozens per request; bench:receive measured this at
 * about 15 % of the receiver's CPU and most of its cost beyond a bare
 * function (`npm run bench:receive`, docs/performance.md).
 *
 * What it gives up, and why that is safe here: the domain turns an exception
 * thrown from a request's own callbacks into a 500 for that request. Our
 * handlers are async functions that catch their failures and answer
 * themselves; a rejected promise still reaches the framework's `.catch` (the
 * returned promise is the framework's to watch). An exception that escapes
 * anyway now reaches the framework's uncaughtException handler, which
 * answers 500 and restarts the instance: Pub/Sub, Cloud Tasks or the
 * scheduler retry either way, so nothing is acked.
 */
export function outsideRequestDomain(fn: HttpFunction): HttpFunction {
  return (req, res) => {
    (process as WithDomain).domain?.exit();
    return fn(req, res);
  };
}
