import { runCli } from '../../../../functions/src/cli/main';
import { instancesByBusinessKey, readInstance } from '../../../../functions/src/operations/instances';
import type { InstanceView } from '../../../../functions/src/operations/types';
import { freshFirestores } from '../../../../test/support/firestore';
import { waitFor } from '../../../../test/support/wait';
import { type AppStack, startAppStack } from './app-stack';

/**
 * What operators see and do with the claims app, through the `inbox` CLI
 * as they run it (INBOX_APP=examples/claims, the emulator project of a
 * stack of the app's functions): the app, the lists, `explain`, `waiting`,
 * `timers`, a repair. Nothing of it is written for claims; none of it may
 * speak of the work-order example. And the per-key order as a sender meets
 * it: a review sent before the documents it follows.
 */

const firestore = freshFirestores();
const { projectId } = firestore.project('claims-ops');
let stack: AppStack;

beforeAll(async () => {
  stack = await startAppStack('examples/claims', projectId);
});
firestore.beforeTerminate(async () => stack.stop());

interface Run {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

/** `inbox ARGS` for this stack's project and app; nobody answers a question. */
async function inbox(...args: string[]): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const io = { out: (t: string) => out.push(t), err: (t: string) => err.push(t), confirm: async () => false };
  const code = await runCli(args, io, {
    ...process.env,
    GOOGLE_CLOUD_PROJECT: projectId,
    INBOX_APP: 'examples/claims',
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
}
const json = async (...args: string[]): Promise<unknown> => {
  const run = await inbox('--json', ...args);
  expect({ args, code: run.code, err: run.err }).toEqual({ args, code: 0, err: '' });
  return JSON.parse(run.out) as unknown;
};

/** The example's words, which no operator text about another app may use. */
const WORK_ORDER_WORDS = /work[ -]?orders?|invoic|WO-\d/i;

const claim = (claimId: string, amountCents: number): Record<string, unknown> => ({
  claimId,
  eventId: `submitted-${claimId}`,
  policyId: 'POL-9',
  claimantId: 'C-1',
  amountCents,
  currency: 'EUR',
  submittedAt: '2026-12-01T08:00:00Z',
});
const documents = (claimId: string, eventId = `documents-${claimId}`): Record<string, unknown> => ({
  claimId,
  eventId,
  documents: [{ kind: 'INVOICE', uri: `portal://${claimId}/invoice.pdf` }],
});

async function instanceOf(claimId: string): Promise<InstanceView | undefined> {
  const [row] = await instancesByBusinessKey(stack.ops, claimId);
  return row === undefined ? undefined : ((await readInstance(stack.ops, row.id)) ?? undefined);
}
const instanceWhen = (claimId: string, what: string, ready: (i: InstanceView) => boolean): Promise<InstanceView> =>
  waitFor(`${claimId}: ${what}`, async () => {
    const instance = await instanceOf(claimId);
    return instance !== undefined && ready(instance) ? instance : undefined;
  });

interface ListedRow {
  readonly id: string;
  readonly status: string;
  readonly reason: string | null;
  readonly messageName: string | null;
}
const listed = async (...filters: string[]): Promise<ListedRow[]> => (await json('list', ...filters)) as ListedRow[];

describe('the inbox CLI on the claims app', () => {
  test('inbox app names the claims app and its message types', async () => {
    const app = (await json('app')) as { app: string; messages: Array<{ name: string; topic: string }> };
    expect(app.app).toBe('claims');
    expect(app.messages.map((m) => m.name).sort()).toEqual(['ClaimSubmitted', 'DocumentsProvided', 'ReviewCompleted']);
  });

  test('a waiting claim: waiting and timers list it, instances shows its token', async () => {
    await stack.publish('claims-submitted', 'ClaimSubmitted', claim('CLM-OPS-1', 250_000));
    await instanceWhen('CLM-OPS-1', 'waiting for documents', (i) =>
      i.tokens.some((t) => t.status === 'WAITING_MESSAGE'),
    );

    const waiting = (await json('waiting', '--message', 'DocumentsProvided')) as {
      waitingPoints: Array<{ correlationKey: string; activityId: string }>;
    };
    expect(waiting.waitingPoints.filter((w) => w.correlationKey === 'CLM-OPS-1').map((w) => w.activityId)).toEqual([
      'waitForDocuments',
    ]);
    const instance = await instanceOf('CLM-OPS-1');
    const timers = (await json('timers', '--instance', instance?.row.id ?? '')) as {
      timers: Array<{ activityId: string; status: string }>;
    };
    expect(timers.timers.map((t) => t.activityId)).toEqual(['documentsOverdue']);

    const shown = await inbox('instances', 'CLM-OPS-1');
    expect(shown.code).toBe(0);
    expect(shown.out).toContain('claim-handling');
    expect(shown.out).toContain('waitForDocuments');
    expect(shown.out).not.toMatch(WORK_ORDER_WORDS);
  });

  test('a malformed message is parked with its reason; explain says why and what to do in generic words', async () => {
    await stack.publish('claims-documents', 'DocumentsProvided', {
      claimId: 'CLM-OPS-2',
      eventId: 'documents-bad',
      documents: [],
    });
    const [parked] = await waitFor('the malformed documents parked', async () => {
      const rows = await listed('--status', 'PARKED', '--message-name', 'DocumentsProvided');
      return rows.length > 0 ? rows : undefined;
    });
    expect(parked).toMatchObject({ status: 'PARKED', messageName: 'DocumentsProvided' });

    const explained = await inbox('explain', parked?.id ?? '');
    expect(explained.code).toBe(0);
    expect(explained.out).toContain('PARKED');
    expect(explained.out).toContain(parked?.reason ?? 'no reason');
    expect(explained.out).toContain('documents');
    expect(explained.out).not.toMatch(WORK_ORDER_WORDS);
  });

  test('a message nobody waits for stays OPEN, explain says it waits for a token, and park stops it', async () => {
    await stack.publish('claims-reviews', 'ReviewCompleted', {
      claimId: 'CLM-OPS-3',
      eventId: 'review-stray',
      decision: 'APPROVED',
      reviewer: 'rev-1',
    });
    const [open] = await waitFor('the stray review OPEN', async () => {
      const rows = await listed('--status', 'OPEN', '--key', 'CLM-OPS-3');
      return rows.length > 0 ? rows : undefined;
    });
    const explained = await inbox('explain', open?.id ?? '');
    expect(explained.out).toContain('ReviewCompleted');
    expect(explained.out).not.toMatch(WORK_ORDER_WORDS);

    expect((await inbox('park', open?.id ?? '', '--reason', 'no such claim')).code).toBe(0);
    expect(await listed('--status', 'PARKED', '--key', 'CLM-OPS-3')).toEqual([
      expect.objectContaining({ id: open?.id, reason: 'MANUAL' }),
    ]);
  });
});

describe('per-key order as a sender meets it', () => {
  test('a review sent before the documents does not hold them back: the documents correlate, then the review from the buffer', async () => {
    await stack.publish('claims-submitted', 'ClaimSubmitted', claim('CLM-OPS-4', 400_000));
    await instanceWhen('CLM-OPS-4', 'waiting for documents', (i) =>
      i.tokens.some((t) => t.status === 'WAITING_MESSAGE'),
    );

    // The reviewer's system answers early: no token waits for a review yet, so it waits in the buffer.
    await stack.publish('claims-reviews', 'ReviewCompleted', {
      claimId: 'CLM-OPS-4',
      eventId: 'review-early',
      decision: 'APPROVED',
      reviewer: 'rev-3',
    });
    await waitFor('the early review OPEN', async () =>
      (await listed('--status', 'OPEN', '--key', 'CLM-OPS-4')).length === 1 ? true : undefined,
    );

    // The documents, younger than the review but awaited, go first; the review waits for them, not they for it.
    await stack.publish('claims-documents', 'DocumentsProvided', documents('CLM-OPS-4'));
    const done = await instanceWhen('CLM-OPS-4', 'completed', (i) => i.row.status === 'COMPLETED');
    expect(done.jobs.map((j) => j.activityId)).toEqual(['requestDocuments', 'requestReview', 'payOut']);
    expect(done.audit.map((a) => [a.row?.messageName, a.row?.status])).toEqual([
      ['ClaimSubmitted', 'DONE'],
      ['DocumentsProvided', 'DONE'],
      ['ReviewCompleted', 'DONE'],
    ]);
  });
});
