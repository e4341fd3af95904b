import { join } from 'node:path';
import { loadAppEngine } from '../../functions/src/apps/app-engine';
import { Engine, type MessageBuffer } from '../../functions/src/engine/engine';
import { loadProcessModel } from '../../functions/src/engine/deployed';
import { inboxBuffer } from '../../functions/src/relay/buffer';
import { FIXTURE_APP_DIR, FIXTURE_MODELS, fixtureApp, REPO_ROOT, stepIdsOf } from './app';

export { REPO_ROOT };
const WEEK_MS = 7 * 24 * 3_600_000;

/** The fixture app's engine as a function loads it (its models checked against its steps and messages), with the inbox as buffer. */
export function fixtureEngine(): Promise<Engine> {
  return loadAppEngine(
    { app: fixtureApp, folder: FIXTURE_APP_DIR },
    FIXTURE_MODELS,
    stepIdsOf(fixtureApp),
    inboxBuffer(WEEK_MS),
  );
}

/** The test model of rounds of two messages (test/fixtures/bpmn/rounds.bpmn); `buffer`: the inbox unless a test stands in for it. */
export async function roundsEngine(buffer: MessageBuffer = inboxBuffer(WEEK_MS)): Promise<Engine> {
  const model = await loadProcessModel(join(REPO_ROOT, 'test', 'fixtures', 'bpmn', 'rounds.bpmn'));
  const countRound = (v: Readonly<Record<string, unknown>>): Record<string, unknown> => ({
    rounds: (typeof v.rounds === 'number' ? v.rounds : 0) + 1,
  });
  return new Engine([model], { countRound }, new Set(), buffer);
}

/**
 * The deadline models (test/fixtures/bpmn/deadline-*.bpmn): a receive task
 * with an interrupting timer boundary event, and an event-based gateway
 * between the completion and a timer; both take `${deadline}`. No async
 * steps, so no handlers; the inbox as buffer.
 */
export async function deadlineEngine(): Promise<Engine> {
  const dir = join(REPO_ROOT, 'test', 'fixtures', 'bpmn');
  const models = await Promise.all(
    ['deadline-boundary.bpmn', 'deadline-gateway.bpmn'].map((f) => loadProcessModel(join(dir, f))),
  );
  return new Engine(models, {}, new Set(), inboxBuffer(WEEK_MS));
}

/** A buffer whose lookup never answers: a transaction that reaches a waiting point hangs (deadline tests). */
export const HANGING_BUFFER: MessageBuffer = { take: () => new Promise(() => undefined) };

/**
 * The same models, but every correlation that finds its waiting instance
 * fails inside the transaction with `error`, as if the connection broke
 * mid-transaction. The default, a reset socket, is a technical failure to
 * the relay (classifyFailure) that the Firestore client does not retry by
 * itself (it retries numeric gRPC codes such as UNAVAILABLE five times with
 * backoff, which only slows a test down). The failure record, a transaction
 * of its own that needs no model, still goes through.
 */
export function failingEngine(
  engine: Engine,
  error: Error = Object.assign(new Error('injected: connection reset'), { code: 'ECONNRESET' }),
): Engine {
  const models = engine.processKeys.map((key) => engine.model(key));
  const asyncIds = new Set(
    models.flatMap((m) =>
      Object.values(m.nodes)
        .filter((n) => (n.kind === 'serviceTask' || n.kind === 'sendTask') && n.async)
        .map((n) => n.id),
    ),
  );
  return new (class extends Engine {
    override model(): never {
      throw error;
    }
    override at(): never {
      throw error;
    }
  })(models, engine.sync, asyncIds, engine.buffer);
}
