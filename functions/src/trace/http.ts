import type { Request, Response } from '@google-cloud/functions-framework';
import { trace } from '@opentelemetry/api';
import { fromHeaders, withSpan } from './trace';

/**
 * An HTTP function whose request carries a `traceparent` header (a Cloud
 * Task this project created, a caller of startProcess that traces) runs in a
 * span named after the function, child of that header's span. Without a valid
 * header it runs as it is: a scheduled relay call or a sweep starts no trace
 * of its own (the relay's document spans take the documents' context).
 */
export function tracedRequest(
  name: string,
  handler: (req: Request, res: Response) => Promise<void>,
): (req: Request, res: Response) => Promise<void> {
  return (req, res) => {
    const parent = fromHeaders((h) => req.get(h));
    if (trace.getSpanContext(parent) === undefined) return handler(req, res);
    return withSpan(name, parent, () => handler(req, res), { 'http.route': req.path });
  };
}
