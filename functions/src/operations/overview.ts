// placeholder until the operations helpers' branches merge
import { INBOX } from '../inbox/document';
import type { OperationsDeps, Overview } from './types';

export async function readOverview(deps: OperationsDeps): Promise<Overview> {
  const count = async (status: string): Promise<number> => (await deps.db().collection(INBOX).where('status', '==', status).count().get()).data().count;
  return {
    at: deps.now().toISOString(),
    counts: { OPEN: await count('OPEN'), DONE: await count('DONE'), PARKED: await count('PARKED') },
    parkedByReason: {},
    oldestOpenAgeSeconds: null,
    openIncidents: 0,
    failedJobs: 0,
    waitingAlertDays: deps.config.relay.waitingAlertDays,
    waiting: [],
  };
}
