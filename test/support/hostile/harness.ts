import type { Firestore, Timestamp } from '@google-cloud/firestore';
import { createHash } from 'node:crypto';
import { Agent, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import { INBOX } from '../../../functions/src/inbox/document';
import type { HostileCase } from './cases';
import type { Endpoint, HostileRequest, StoredExpectation } from './envelopes';

/**
 * Sends generated requests to an endpoint served on a real port and checks
 * every answer and every inbox document against what the case expects.
 * Checks return mismatch texts (naming seed-replayable case indexes) so one
 * assertion reports them all.
 */

/** An in-process server listening on a free local port. */
export interface Served {
  readonly port: number;
  close(): Promise<void>;
}

/** Listens on port 0 (a free port) on the loopback interface. */
export async function serve(server: Server): Promise<Served> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    close: () => new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))),
  };
}

/** One answer as received; status 0 when the connection failed (a crashed or hung server). */
export interface HttpAnswer {
  readonly status: number;
  readonly contentType: string;
  readonly text: string;
}

function send(port: number, agent: Agent, req: HostileRequest): Promise<HttpAnswer> {
  return new Promise((resolve) => {
    const call = request(
      {
        host: '127.0.0.1',
        port,
        path: '/',
        method: req.method,
        agent,
        headers: { ...req.headers, 'content-length': String(req.body.length) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            contentType: String(res.headers['content-type'] ?? ''),
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    call.on('error', (err) => resolve({ status: 0, contentType: '', text: err.message }));
    call.end(req.body);
  });
}

/** Sends every request with at most `concurrency` in flight over keep-alive connections; answers in request order. */
export async function sendAll(
  port: number,
  requests: readonly HostileRequest[],
  concurrency: number,
): Promise<HttpAnswer[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const answers: HttpAnswer[] = new Array<HttpAnswer>(requests.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < requests.length; i = next++) answers[i] = await send(port, agent, requests[i]!);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  agent.destroy();
  return answers;
}

/** Own keys of the built-in prototypes and constructors a polluting merge would touch. */
export function prototypeSnapshot(): Record<string, string[]> {
  const keys = (o: object) => Reflect.ownKeys(o).map(String).sort();
  return {
    'Object.prototype': keys(Object.prototype),
    Object: keys(Object),
    'Array.prototype': keys(Array.prototype),
    'Function.prototype': keys(Function.prototype),
    'String.prototype': keys(String.prototype),
  };
}

/** The answer body a stored case must get from each endpoint. */
function storedAnswer(endpoint: Endpoint, e: StoredExpectation): Record<string, unknown> {
  if (endpoint === 'deadLetter') return { outcome: 'parked', id: e.id };
  return e.verdict.valid
    ? { outcome: 'stored', id: e.id, status: 'OPEN', reason: null }
    : { outcome: 'stored', id: e.id, status: 'PARKED', reason: 'INVALID_PAYLOAD' };
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Why the answer to `c` is wrong, or null. */
export function answerMismatch(endpoint: Endpoint, c: HostileCase, a: HttpAnswer): string | null {
  const where = `#${c.index} (${c.className})`;
  const got = `${a.status} ${a.contentType} ${a.text.slice(0, 200)}`;
  const e = c.expected;
  if (e.kind === 'stored') {
    return a.status === 200 &&
      a.contentType.startsWith('application/json') &&
      isDeepStrictEqual(parse(a.text), storedAnswer(endpoint, e))
      ? null
      : `${where}: expected 200 ${JSON.stringify(storedAnswer(endpoint, e))}, got ${got}`;
  }
  if (a.status !== e.status) return `${where}: expected ${e.status} (${e.error}), got ${got}`;
  if (e.by === 'framework')
    return a.contentType.startsWith('text/html')
      ? null
      : `${where}: expected the framework's HTML error page, got ${got}`;
  const body = parse(a.text) as { error?: unknown } | undefined;
  const ok =
    a.contentType.startsWith('application/json') && typeof body?.error === 'string' && body.error.includes(e.error);
  return ok ? null : `${where}: expected a JSON error containing ${JSON.stringify(e.error)}, got ${got}`;
}

/** Counts of answers per class and status, for the report. */
export function statusTable(
  cases: readonly HostileCase[],
  answers: readonly HttpAnswer[],
): Record<string, Record<string, number>> {
  const table: Record<string, Record<string, number>> = {};
  cases.forEach((c, i) => {
    const row = (table[c.className] ??= {});
    const status = String(answers[i]?.status ?? 0);
    row[status] = (row[status] ?? 0) + 1;
  });
  return table;
}

const PAYLOAD_FIELDS = new Set(['caseId', 'completedItems', 'completionTimestamp', 'eventId']);
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** Why a stored document differs from what its case expects, or null. */
function documentMismatch(endpoint: Endpoint, e: StoredExpectation, doc: Record<string, unknown>): string | null {
  const source = doc.source as { messageId?: unknown; subscription?: unknown; attributes?: unknown } | undefined;
  const want =
    endpoint === 'deadLetter'
      ? ['PARKED', 'DEAD_LETTERED']
      : e.verdict.valid
        ? ['OPEN', null]
        : ['PARKED', 'INVALID_PAYLOAD'];
  const checks: Array<[string, boolean]> = [
    ['status and reason', isDeepStrictEqual([doc.status, doc.reason], want)],
    ['plain prototype', Object.getPrototypeOf(doc) === Object.prototype],
    ['source.messageId', source?.messageId === e.messageId],
    ['source.subscription', source?.subscription === e.subscription],
    ['source.attributes', isDeepStrictEqual(source?.attributes, e.attributes)],
  ];
  if (e.deadLetterAttributes !== null) {
    const stored = (doc.deadLetter as { attributes?: Record<string, unknown> } | undefined)?.attributes ?? {};
    checks.push([
      'deadLetter.attributes',
      isDeepStrictEqual(Object.entries(stored).sort(), Object.entries(e.deadLetterAttributes).sort()),
    ]);
  }
  if (e.verdict.valid) {
    const payload = doc.payload as Record<string, unknown> | null;
    checks.push([
      'payload',
      payload !== null &&
        Object.getPrototypeOf(payload) === Object.prototype &&
        Object.keys(payload).every((k) => PAYLOAD_FIELDS.has(k)) &&
        isDeepStrictEqual({ ...payload }, e.verdict.payload),
    ]);
    checks.push([
      'correlationKey',
      doc.correlationKey === e.verdict.correlationKey && doc.dedupKey === e.verdict.dedupKey,
    ]);
  } else {
    checks.push([
      'validationError',
      typeof doc.validationError === 'string' && doc.validationError.includes(e.verdict.error),
    ]);
    checks.push([
      'raw data',
      doc.payloadHash === sha256(e.verdict.raw) &&
        doc.rawDataBytes === e.verdict.raw.length &&
        doc.rawDataForm === e.verdict.form,
    ]);
    checks.push(['messageName', doc.messageName === e.messageName]);
  }
  const failed = checks.filter(([, ok]) => !ok).map(([name]) => name);
  return failed.length === 0
    ? null
    : `${failed.join(', ')} wrong: ${JSON.stringify({ ...doc, rawData: undefined }).slice(0, 600)}`;
}

/**
 * Reads the whole inbox of the test's project: every stored case must have
 * its document, as expected, and there must be no other document. Returns
 * each document's update time too, to show later that nothing changed.
 */
export async function inboxMismatches(
  db: Firestore,
  endpoint: Endpoint,
  cases: readonly HostileCase[],
): Promise<{ mismatches: string[]; documents: number; expected: number; updateTimes: Map<string, Timestamp> }> {
  const snapshot = await db.collection(INBOX).get();
  const docs = new Map(snapshot.docs.map((d) => [d.id, d.data()]));
  const updateTimes = new Map(snapshot.docs.map((d) => [d.id, d.updateTime]));
  const mismatches: string[] = [];
  const ids = new Set<string>();
  for (const c of cases) {
    if (c.expected.kind !== 'stored') continue;
    ids.add(c.expected.id);
    const doc = docs.get(c.expected.id);
    const problem = doc === undefined ? 'no document' : documentMismatch(endpoint, c.expected, doc);
    if (problem !== null) mismatches.push(`#${c.index} (${c.className}) ${c.expected.id}: ${problem}`);
  }
  for (const id of docs.keys())
    if (!ids.has(id)) mismatches.push(`unexpected document ${id}: ${JSON.stringify(docs.get(id)).slice(0, 300)}`);
  return { mismatches, documents: docs.size, expected: ids.size, updateTimes };
}
