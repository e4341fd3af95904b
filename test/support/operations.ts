import type { Firestore } from '@google-cloud/firestore';
import { loadConfig } from '../../functions/src/config';
import type { Engine } from '../../functions/src/engine/engine';
import { createLogger } from '../../functions/src/log';
import type { OperationsDeps } from '../../functions/src/operations/types';
import { FIXTURE_ENV, FIXTURE_MODELS, FIXTURE_REGISTRY } from './app';

/**
 * What operations/ needs, on one project of the emulator: the fixture
 * app's message types and models, no queues (a repair's jobs stay for the
 * sweep), no payload store, the real clock, and the log lines kept for the
 * test to read.
 */
export function operationsDepsFor(
  db: Firestore,
  projectId: string,
  engine: Engine,
): { deps: OperationsDeps; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const deps: OperationsDeps = {
    db: () => db,
    engine: async () => engine,
    registry: () => FIXTURE_REGISTRY,
    modelsDir: () => FIXTURE_MODELS,
    jobQueue: null,
    timerQueue: null,
    payloadStore: () => {
      throw new Error('no payload store in these tests');
    },
    config: loadConfig({ GOOGLE_CLOUD_PROJECT: projectId, ...FIXTURE_ENV }),
    log: createLogger((line) => lines.push(JSON.parse(line) as Record<string, unknown>)),
    now: () => new Date(),
  };
  return { deps, lines };
}
