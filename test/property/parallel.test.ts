import fc from 'fast-check';
import { parseProcessModel } from '../../functions/src/bpmn/parse-model';
import { isOpenIncident } from '../../functions/src/engine/state';
import { bpmnDocument, element, sequenceFlow } from '../support/bpmn-xml';
import { CoreSim } from '../support/core-sim';

/**
 * Properties of parallel gateways in the pure core, over random
 * series-parallel models (async tasks, user tasks, message throw events and
 * uncaught escalations in sequences, nested fork/join blocks and embedded
 * subprocesses) completed in random order: every piece of work
 * runs exactly once, every join goes on exactly once, and the instance
 * completes; with a token cancelled on the way, the instance never waits
 * silently (it ends, or a JOIN_INCOMPLETE incident says why it cannot).
 */

const SEED = 20_261_206;

type Block =
  | { readonly kind: 'task' }
  | { readonly kind: 'user' }
  /** A message throw event: a job publishes its message. */
  | { readonly kind: 'publish' }
  /** An escalation throw event nothing catches: the token passes on. */
  | { readonly kind: 'notice' }
  | { readonly kind: 'seq'; readonly items: readonly Block[] }
  | { readonly kind: 'par'; readonly branches: readonly Block[] }
  | { readonly kind: 'sub'; readonly body: Block };

const block: fc.Arbitrary<Block> = fc.letrec<{ block: Block }>((tie) => ({
  block: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant<Block>({ kind: 'task' }),
    fc.constant<Block>({ kind: 'user' }),
    fc.constant<Block>({ kind: 'publish' }),
    fc.constant<Block>({ kind: 'notice' }),
    fc.record({ kind: fc.constant('seq' as const), items: fc.array(tie('block'), { minLength: 2, maxLength: 3 }) }),
    fc.record({ kind: fc.constant('par' as const), branches: fc.array(tie('block'), { minLength: 2, maxLength: 3 }) }),
    fc.record({ kind: fc.constant('sub' as const), body: tie('block') }),
  ),
})).block;

/** The model of a block between a start and an end event; `work`: the ids of its tasks. */
function modelXml(root: Block): { xml: string; work: string[] } {
  let n = 0;
  const work: string[] = [];
  const flow = (from: string, to: string): string => sequenceFlow(`f${n++}`, from, to);
  /** The block's elements and inner flows (drawn at the level it is in), its entry and exit ids. */
  const emit = (b: Block): { xml: string; entry: string; exit: string } => {
    switch (b.kind) {
      case 'task':
      case 'user': {
        const id = `${b.kind}${n++}`;
        work.push(id);
        const xml = b.kind === 'task' ? element('serviceTask', id, 'inbox:async="true"') : element('userTask', id);
        return { xml, entry: id, exit: id };
      }
      case 'publish': {
        const id = `publish${n++}`;
        work.push(id);
        return {
          xml: element('intermediateThrowEvent', id, '', '<bpmn:messageEventDefinition messageRef="m" />'),
          entry: id,
          exit: id,
        };
      }
      case 'notice': {
        const id = `notice${n++}`;
        const xml = element(
          'intermediateThrowEvent',
          id,
          '',
          '<bpmn:escalationEventDefinition escalationRef="note" />',
        );
        return { xml, entry: id, exit: id };
      }
      case 'seq': {
        const emitted = b.items.map(emit);
        const links = emitted.slice(1).map((e, i) => flow((emitted[i] as { exit: string }).exit, e.entry));
        return {
          xml: emitted.map((e) => e.xml).join('') + links.join(''),
          entry: (emitted[0] as { entry: string }).entry,
          exit: (emitted.at(-1) as { exit: string }).exit,
        };
      }
      case 'par': {
        const fork = `fork${n++}`;
        const join = `join${n++}`;
        const branches = b.branches.map(emit);
        const xml =
          element('parallelGateway', fork) +
          element('parallelGateway', join) +
          branches.map((e) => e.xml + flow(fork, e.entry) + flow(e.exit, join)).join('');
        return { xml, entry: fork, exit: join };
      }
      case 'sub': {
        const id = `sub${n++}`;
        const body = emit(b.body);
        const inside =
          element('startEvent', `${id}s`) +
          element('endEvent', `${id}e`) +
          body.xml +
          flow(`${id}s`, body.entry) +
          flow(body.exit, `${id}e`);
        return { xml: element('subProcess', id, '', inside), entry: id, exit: id };
      }
    }
  };
  const body = emit(root);
  const xml =
    element('startEvent', 'start') +
    element('endEvent', 'end') +
    body.xml +
    flow('start', body.entry) +
    flow(body.exit, 'end');
  return { xml: bpmnDocument(xml, '<bpmn:escalation id="note" escalationCode="NOTE" />'), work };
}

/** Completes one piece of open work, the `pick`-th (mod the count); false when none is open. */
function doSomeWork(sim: CoreSim, pick: number, done: string[]): boolean {
  const jobs = sim.pendingJobs().map((j) => ({ kind: 'job' as const, at: j.activityId }));
  const tasks = sim.openTasks().map((u) => ({ kind: 'task' as const, at: u.activityId }));
  const open = [...jobs, ...tasks];
  if (open.length === 0) return false;
  const chosen = open[pick % open.length] as (typeof open)[number];
  if (chosen.kind === 'job') sim.finishJob(chosen.at);
  else sim.completeTask(chosen.at);
  done.push(chosen.at);
  return true;
}

/** Every live token waits for something that exists: a job, a user task, the other flows of its join, a live token inside its subprocess. */
function everyTokenWaitsForSomething(sim: CoreSim): void {
  const live = sim.live();
  for (const token of live) {
    if (token.status === 'WAITING_JOB') expect(sim.jobs.get(token.jobId ?? '')?.status).toBe('PENDING');
    else if (token.status === 'WAITING_USER') expect(sim.userTasks.get(token.userTaskId ?? '')?.status).toBe('OPEN');
    else if (token.status === 'WAITING_SCOPE') expect(live.some((t) => t.parentId === token.id)).toBe(true);
    else expect(token.status).toBe('WAITING_JOIN');
  }
}

describe('parallel gateways over random series-parallel models', () => {
  test('in any order of completion: each task once, the instance completes, no incident', async () => {
    await fc.assert(
      fc.asyncProperty(block, fc.array(fc.nat(), { minLength: 64, maxLength: 64 }), async (root, picks) => {
        const { xml, work } = modelXml(root);
        const sim = new CoreSim(await parseProcessModel(xml));
        sim.start();
        const done: string[] = [];
        for (const pick of picks) {
          everyTokenWaitsForSomething(sim);
          if (!doSomeWork(sim, pick, done)) break;
        }
        while (doSomeWork(sim, 0, done));
        expect([...done].sort()).toEqual([...work].sort());
        expect(sim.instance).toMatchObject({ status: 'COMPLETED', activeExecutionIds: [], incidents: [] });
        // Every token ended; only the one that reached the end event ended there.
        expect(Object.values(sim.tokens).every((t) => t.status === 'ENDED')).toBe(true);
        expect(Object.values(sim.tokens).filter((t) => t.activityId === 'end')).toHaveLength(1);
      }),
      { seed: SEED, numRuns: 200 },
    );
  });

  test('with a token cancelled on the way, the instance never waits silently', async () => {
    await fc.assert(
      fc.asyncProperty(
        block,
        fc.array(fc.nat(), { minLength: 32, maxLength: 32 }),
        fc.nat(),
        fc.nat(),
        async (root, picks, when, which) => {
          const { xml } = modelXml(root);
          const sim = new CoreSim(await parseProcessModel(xml));
          sim.start();
          const done: string[] = [];
          for (const pick of picks.slice(0, when % picks.length)) if (!doSomeWork(sim, pick, done)) break;
          const working = sim.live().filter((t) => t.status !== 'WAITING_JOIN' && t.status !== 'WAITING_SCOPE');
          if (working.length === 0) return;
          sim.cancel((working[which % working.length] as { id: string }).id);
          while (doSomeWork(sim, 0, done));
          const live = sim.live();
          if (live.length === 0) return;
          // Something is left: it can only be tokens at joins (and the subprocesses around them), and an open incident says so.
          expect(live.every((t) => t.status === 'WAITING_JOIN' || t.status === 'WAITING_SCOPE')).toBe(true);
          expect(sim.instance?.status).toBe('INCIDENT');
          const open = (sim.instance?.incidents ?? []).filter(isOpenIncident);
          expect(open.map((i) => i.reason)).toContain('JOIN_INCOMPLETE');
          for (const token of live.filter((t) => t.status === 'WAITING_JOIN'))
            expect(open.some((i) => i.activityId === token.activityId)).toBe(true);
        },
      ),
      { seed: SEED, numRuns: 200 },
    );
  });
});
