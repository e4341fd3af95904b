import { join } from 'node:path';
import { loadProcessModel } from '../../functions/src/bpmn/parse-model';
import { Engine } from '../../functions/src/engine/engine';
import { loadEngine } from '../../functions/src/engine/deployed';
import { inboxBuffer } from '../../functions/src/relay/buffer';

export const REPO_ROOT = join(__dirname, '..', '..');
const WEEK_MS = 7 * 24 * 3_600_000;

/** The deployed models (bpmn/) with the work-order handlers' task ids registered, and the inbox as buffer. */
export function workOrderEngine(): Promise<Engine> {
  return loadEngine(join(REPO_ROOT, 'bpmn'), {}, new Set(['handOverWorkOrder', 'createInvoice']), inboxBuffer(WEEK_MS));
}

/** The test model of rounds of two messages (test/fixtures/bpmn/rounds.bpmn). */
export async function roundsEngine(): Promise<Engine> {
  const model = await loadProcessModel(join(REPO_ROOT, 'test', 'fixtures', 'bpmn', 'rounds.bpmn'));
  const countRound = (v: Readonly<Record<string, unknown>>): Record<string, unknown> => ({ rounds: (typeof v.rounds === 'number' ? v.rounds : 0) + 1 });
  return new Engine([model], { countRound }, new Set(), inboxBuffer(WEEK_MS));
}
