/**
 * Multi-instance activities whose items end within the step that starts
 * them, and a completion condition that fails, through the store on the
 * emulator (issue 39, defects 7 and 2): each follow-up of a unit of work is
 * computed when its turn comes, so the activity leaves once, with every
 * output; a failed condition holds the instance in INCIDENT until a repair.
 */
import type { ProcessModel } from '../../functions/src/bpmn/model';
import { parseProcessModel } from '../../functions/src/bpmn/parse-model';
import { Engine } from '../../functions/src/engine/engine';
import { COLLECTIONS, refs } from '../../functions/src/engine/store/collections';
import { completeJobCounted } from '../../functions/src/engine/store/complete-job';
import { STORED } from '../../functions/src/engine/store/converters';
import { moveToken } from '../../functions/src/engine/store/move-token';
import { RepairRefusedError } from '../../functions/src/engine/store/repair-request';
import { resolveIncident } from '../../functions/src/engine/store/resolve-incident';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import type { InstanceState, JobState } from '../../functions/src/engine/state';
import { asyncTask, bpmnDocument, chain, element } from '../support/bpmn-xml';
import { freshFirestores } from '../support/firestore';
import { tokensOf } from '../support/process-state';

const fresh = freshFirestores();
const { db } = fresh.project('multi-instance-steps');

const instance = async (id: string): Promise<InstanceState> =>
  (await refs.instance(db, id).withConverter(STORED).get()).data() as unknown as InstanceState;

/** start → items (over `letters`, `attributes`, `body` inside) → after (async) → done. */
const withItems = (task: string, attributes: string, condition: string): Promise<ProcessModel> =>
  parseProcessModel(
    bpmnDocument(
      element('startEvent', 'start') +
        task.replace(
          '/>',
          `><bpmn:multiInstanceLoopCharacteristics ${attributes} inbox:collection="letters" inbox:elementVariable="letter" inbox:outputCollection="outs" inbox:outputElement="out"><bpmn:completionCondition>${condition}</bpmn:completionCondition></bpmn:multiInstanceLoopCharacteristics></bpmn:serviceTask>`,
        ) +
        asyncTask('after') +
        element('endEvent', 'done') +
        chain('start', 'items', 'after', 'done'),
    ),
  );

describe('synchronous items with a completion condition (each item ends in the step that starts it)', () => {
  /** Each item sets `out` = y-LETTER, and `stop` when its letter is the one given. */
  const engineFor = async (stopAt: string): Promise<Engine> => {
    const model = await withItems(element('serviceTask', 'items', ''), '', '${stop == true}');
    const mark = (v: Readonly<Record<string, unknown>>) => ({
      out: `y-${String(v.letter)}`,
      stop: v.letter === stopAt,
    });
    return new Engine([model], { items: mark }, new Set(['after']));
  };

  test.each([
    ['a', ['y-a', null, null]],
    ['b', ['y-a', 'y-b', null]],
    ['c', ['y-a', 'y-b', 'y-c']],
  ])(
    'the condition holds at item %s: the activity leaves once, with the outputs of the items that ended before it held',
    async (stopAt, outs) => {
      const engine = await engineFor(stopAt);
      const s = await startProcessInstance(db, engine, {
        processKey: 'p',
        businessKey: `sync-${stopAt}`,
        variables: { letters: ['a', 'b', 'c'] },
        now: new Date(),
      });
      // The step after the activity is reached once: one job, one token.
      expect(s.jobs.map((j) => j.activityId)).toEqual(['after']);
      const stored = await instance(s.instance.id);
      expect(stored.variables.outs).toEqual(outs);
      expect((await tokensOf(db, s.instance.id)).filter((t) => t.activityId === 'after')).toHaveLength(1);
      // A parallel activity starts its items together (as Camunda 8 activates them all first): each ran, and the
      // ends after the one that met the condition came too late to count.
      const items = await db.collection(COLLECTIONS.instances).where('calledBy.instanceId', '==', s.instance.id).get();
      expect(items.size).toBe(3);
      expect(items.docs.every((d) => d.get('status') === 'COMPLETED')).toBe(true);
    },
  );
});

describe('a completion condition that fails', () => {
  /** Items are async jobs (`items`); the FEEL condition reads `approved`, which no item sets. */
  const engineWith = async (attributes: string): Promise<Engine> =>
    new Engine(
      [await withItems(element('serviceTask', 'items', 'inbox:async="true"'), attributes, '=approved')],
      {},
      new Set(['items', 'after']),
    );

  async function run(engine: Engine, businessKey: string): Promise<{ id: string; jobs: JobState[] }> {
    const s = await startProcessInstance(db, engine, {
      processKey: 'p',
      businessKey,
      variables: { letters: ['a', 'b', 'c'] },
      now: new Date(),
    });
    return { id: s.instance.id, jobs: [...s.jobs] };
  }

  test('sequential: the first item ends, the activity stops with an incident, starts no next item, and resolve is refused', async () => {
    const engine = await engineWith('isSequential="true"');
    const { id, jobs } = await run(engine, 'seq-fail');
    expect(jobs).toHaveLength(1);
    const done = await completeJobCounted(db, engine, jobs[0] as JobState, {}, new Date());
    expect(done.result.jobs).toEqual([]);
    const stopped = await instance(id);
    expect(stopped.status).toBe('INCIDENT');
    expect(stopped.incidents.map((i) => [i.reason, i.activityId])).toEqual([['EXPRESSION_FAILED', 'items']]);
    const token = (await tokensOf(db, id)).find((t) => t.activityId === 'items');
    expect(token?.items?.conditionFailed).toMatch(/completion condition: FEEL "=approved"/);
    await expect(resolveIncident(db, id, null, new Date())).rejects.toThrow(RepairRefusedError);
    await expect(resolveIncident(db, id, null, new Date())).rejects.toThrow(
      /completion condition failed .*: it can never finish by itself; move the token/,
    );
    // The repair: the token moved on past the activity; then the incident resolves and the process goes on.
    const moved = await moveToken(db, engine, {
      processInstanceId: id,
      executionId: token?.id ?? null,
      activityId: 'after',
      force: false,
      now: new Date(),
    });
    expect(moved.jobs.map((j) => j.activityId)).toEqual(['after']);
    expect((await resolveIncident(db, id, 'skipped the approvals', new Date())).instance.status).toBe('RUNNING');
  });

  test('parallel: every item ends, the activity never leaves by itself, and resolve is refused until a repair', async () => {
    const engine = await engineWith('');
    const { id, jobs } = await run(engine, 'par-fail');
    expect(jobs).toHaveLength(3);
    for (const job of jobs) await completeJobCounted(db, engine, job, {}, new Date());
    const stopped = await instance(id);
    expect(stopped.status).toBe('INCIDENT');
    expect(stopped.incidents.filter((i) => i.reason === 'EXPRESSION_FAILED')).toHaveLength(1);
    expect((await tokensOf(db, id)).find((t) => t.activityId === 'items')?.status).toBe('WAITING_ITEMS');
    await expect(resolveIncident(db, id, null, new Date())).rejects.toThrow(/completion condition failed/);
    // Moved onto the activity again, it runs its items afresh (a new batch).
    const token = (await tokensOf(db, id)).find((t) => t.activityId === 'items');
    const again = await moveToken(db, engine, {
      processInstanceId: id,
      executionId: token?.id ?? null,
      activityId: 'items',
      force: false,
      now: new Date(),
    });
    expect(again.jobs).toHaveLength(3);
    expect((await tokensOf(db, id)).find((t) => t.activityId === 'items')?.items?.conditionFailed).toBeUndefined();
  });
});
