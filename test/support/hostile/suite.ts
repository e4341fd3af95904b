import type { Firestore, Timestamp } from '@google-cloud/firestore';
import { INBOX } from '../../../functions/src/inbox/document';
import { isDeepStrictEqual } from 'node:util';
import { type TestReceiver } from '../receiver';
import { generateCases, type HostileCase, hostileClasses } from './cases';
import type { Endpoint } from './envelopes';
import {
  answerMismatch,
  type HttpAnswer,
  inboxMismatches,
  prototypeSnapshot,
  sendAll,
  type Served,
  serve,
  statusTable,
} from './harness';

/** Seed of the generated cases: HOSTILE_SEED=<n> replays a reported run. */
export const HOSTILE_SEED = Number(process.env.HOSTILE_SEED ?? 20_261_130);
/** Body limit of the endpoints under test: "near the limit" bodies stay around 1 MB, so the run stays short. */
export const HOSTILE_MAX_BODY_BYTES = 1_500_000;
/** Requests in flight at once. */
const CONCURRENCY = 16;
/** Well-formed envelopes sent a second time, as Pub/Sub redelivers. */
const REDELIVERIES = 300;

const isString = (v: string | null): v is string => v !== null;

/**
 * The hostile-input run against one push endpoint: ≥ 10,000 generated
 * requests, then the answers, the process, the built-in prototypes and the
 * inbox are checked, then well-formed envelopes are redelivered.
 */
export function hostileSuite(endpoint: Endpoint, db: Firestore, receiver: TestReceiver): void {
  const generating = Date.now();
  const cases: HostileCase[] = generateCases(hostileClasses(endpoint, HOSTILE_MAX_BODY_BYTES), HOSTILE_SEED);
  const generatedIn = Date.now() - generating;
  const before = prototypeSnapshot();
  let served: Served;
  let answers: HttpAnswer[] = [];

  beforeAll(async () => {
    served = await serve(receiver.server);
  });
  afterAll(async () => {
    await served.close();
  });

  test(`${cases.length} generated requests (seed ${HOSTILE_SEED}): never a 5xx, each answered as its class requires`, async () => {
    expect(cases.length).toBeGreaterThanOrEqual(10_000);
    const started = Date.now();
    const cpu = process.cpuUsage();
    answers = await sendAll(
      served.port,
      cases.map((c) => c.request),
      CONCURRENCY,
    );
    const used = process.cpuUsage(cpu);
    // The seed, timings and answers per class, for a report or a replay.
    console.log(
      `[hostile ${endpoint}] seed ${HOSTILE_SEED}: generated in ${generatedIn} ms, ${cases.length} requests in ${Date.now() - started} ms (this process: ${Math.round((used.user + used.system) / 1000)} ms CPU)\n${JSON.stringify(statusTable(cases, answers), null, 1)}`,
    );
    // Status 0 is a dropped connection: the server died or hung.
    expect(
      answers.filter((a) => a.status >= 500 || a.status === 0).map((a) => `${a.status} ${a.text.slice(0, 200)}`),
    ).toEqual([]);
    const wrong = cases
      .map((c, i) => answerMismatch(endpoint, c, answers[i] ?? { status: 0, contentType: '', text: 'no answer' }))
      .filter(isString);
    expect({ count: wrong.length, first: wrong.slice(0, 15) }).toEqual({ count: 0, first: [] });
    // Every technical failure is logged "not acked"; there must be none.
    expect(receiver.logs.filter((l) => String(l.message).includes('not acked')).slice(0, 5)).toEqual([]);
  }, 300_000);

  test('the process is alive and no built-in prototype gained a key', async () => {
    const [probe] = await sendAll(
      served.port,
      [{ method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.from('[]') }],
      1,
    );
    expect(probe?.status).toBe(400);
    expect(prototypeSnapshot()).toEqual(before);
    const blank: Record<string, unknown> = {};
    expect([blank.polluted, blank.isAdmin, blank.x]).toEqual([undefined, undefined, undefined]);
  });

  let updateTimes = new Map<string, Timestamp>();

  test('every well-formed envelope has exactly its one document, as expected, and nothing else is stored', async () => {
    const inbox = await inboxMismatches(db, endpoint, cases);
    expect({ count: inbox.mismatches.length, first: inbox.mismatches.slice(0, 10) }).toEqual({ count: 0, first: [] });
    expect(inbox.documents).toBe(inbox.expected);
    expect(inbox.expected).toBeGreaterThan(2_000);
    updateTimes = inbox.updateTimes;
  });

  test(`a redelivery of ${REDELIVERIES} well-formed envelopes changes nothing`, async () => {
    const stored = cases.flatMap((c) => (c.expected.kind === 'stored' ? [{ c, id: c.expected.id }] : []));
    const again = stored.filter((_, i) => i % Math.ceil(stored.length / REDELIVERIES) === 0);
    const replies = await sendAll(
      served.port,
      again.map(({ c }) => c.request),
      CONCURRENCY,
    );
    const outcome = endpoint === 'receiver' ? 'duplicate' : 'recorded';
    const wrong = again.map(({ c, id }, i) => {
      const reply = replies[i];
      return reply?.status === 200 && isDeepStrictEqual(JSON.parse(reply.text), { outcome, id })
        ? null
        : `#${c.index}: ${reply?.status} ${reply?.text.slice(0, 200)}`;
    });
    expect(wrong.filter(isString)).toEqual([]);
    // Not rewritten (same update time), and no document added.
    const snapshots = await db.getAll(...again.map(({ id }) => db.collection(INBOX).doc(id)));
    expect(
      snapshots
        .filter((s) => !s.exists || updateTimes.get(s.id)?.isEqual(s.updateTime ?? s.readTime) !== true)
        .map((s) => s.id),
    ).toEqual([]);
    expect((await db.collection(INBOX).count().get()).data().count).toBe(updateTimes.size);
  });
}
