import { join } from 'node:path';
import type { Engine } from '../../functions/src/engine/engine';
import { loadEngine } from '../../functions/src/engine/deployed';

export const REPO_ROOT = join(__dirname, '..', '..');

/** The deployed models (bpmn/) with the work-order handlers' task ids registered. */
export function workOrderEngine(): Promise<Engine> {
  return loadEngine(join(REPO_ROOT, 'bpmn'), {}, new Set(['handOverWorkOrder', 'createInvoice']));
}
