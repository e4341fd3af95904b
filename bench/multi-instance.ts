/**
 * `npm run bench:items`: a 500-item parallel multi-instance activity on the
 * Firestore emulator, run through the store as runJob runs it (each item an
 * async step whose job completes in a transaction of its own, 16 at a
 * time, as Cloud Tasks would dispatch them). Two runs in one go, on the
 * same items: items counted over up to 25 documents (no completion
 * condition), and counted in one document (a completion condition that
 * never holds forces one, so the counts it sees are whole). Prints reads
 * and writes per item, the start's and the end's transactions, the wall
 * time, and the ratios one document / sharded. Run it alone.
 *
 * A run that has not ended after --deadline seconds stops taking new jobs
 * and is reported as such, with how many items had ended (the Firestore
 * emulator resolves a deadlock between transactions by a lock timeout, where
 * Firestore wounds the younger one at once: a run that queues on one
 * document can stall here for minutes).
 *
 * Flags: --items=500 --concurrency=16 --deadline=300
 */
import type { Firestore } from '@google-cloud/firestore';
import { createFirestore } from '../functions/src/firestore';
import { parseProcessModel } from '../functions/src/bpmn/parse-model';
import { Engine } from '../functions/src/engine/engine';
import type { JobState } from '../functions/src/engine/state';
import { refs } from '../functions/src/engine/store/collections';
import { completeJobCounted } from '../functions/src/engine/store/complete-job';
import { startProcessInstanceCounted } from '../functions/src/engine/store/start-instance';
import { useEmulators } from '../tools/local/use-emulators';

const arg = (name: string, fallback: number): number => {
  const flag = process.argv.find((a) => a.startsWith(`--${name}=`));
  const value = flag === undefined ? fallback : Number(flag.slice(name.length + 3));
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} takes a whole number of at least 1`);
  return value;
};

const xml = (condition: string) => `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:inbox="https://github.com/transactional-inbox/bpmn" id="d" targetNamespace="urn:bench">
  <bpmn:process id="items${condition === '' ? '' : '-one-shard'}" isExecutable="true">
    <bpmn:startEvent id="s" />
    <bpmn:serviceTask id="inspect" inbox:async="true">
      <bpmn:multiInstanceLoopCharacteristics inbox:collection="parts" inbox:outputCollection="verdicts" inbox:outputElement="verdict">${condition}</bpmn:multiInstanceLoopCharacteristics>
    </bpmn:serviceTask>
    <bpmn:endEvent id="e" />
    <bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="inspect" />
    <bpmn:sequenceFlow id="f2" sourceRef="inspect" targetRef="e" />
  </bpmn:process>
</bpmn:definitions>`;

interface Outcome {
  readonly label: string;
  readonly seconds: number;
  readonly start: { reads: number; writes: number };
  readonly itemReads: number;
  readonly itemWrites: number;
  /** The transaction of the item whose end moved the caller on. */
  readonly last: { reads: number; writes: number };
  readonly callerWrites: number;
  readonly verdictsInOrder: boolean;
  /** Item completions whose transaction gave up under contention and ran again (as Cloud Tasks retries runJob). */
  readonly retried: number;
  /** Items that ended before the deadline. */
  readonly ended: number;
}

async function runOnce(
  db: Firestore,
  engine: Engine,
  processKey: string,
  label: string,
  n: number,
  concurrency: number,
  deadlineMs: number,
): Promise<Outcome> {
  const parts = Array.from({ length: n }, (_, i) => `P-${i}`);
  const begun = Date.now();
  const t0 = Date.now();
  const { result: s, stats: startStats } = await startProcessInstanceCounted(db, engine, {
    processKey,
    businessKey: `${label}-${begun}`,
    variables: { parts },
    now: new Date(),
  });
  const ref = refs.instance(db, s.instance.id);
  const afterStart = (await ref.get()).updateTime;
  let callerWrites = 1;
  const queue: JobState[] = [...s.jobs];
  let itemReads = 0;
  let itemWrites = 0;
  let last = { reads: 0, writes: 0 };
  let inFlight = 0;
  let retried = 0;
  let completions = 0;
  await new Promise<void>((resolve, reject) => {
    const pump = (): void => {
      if (Date.now() - t0 > deadlineMs) queue.length = 0;
      if (queue.length === 0 && inFlight === 0) return resolve();
      while (inFlight < concurrency && queue.length > 0) {
        const job = queue.shift() as JobState;
        inFlight += 1;
        completeJobCounted(db, engine, job, { verdict: `ok:${job.processInstanceId.slice(0, 6)}` }, new Date())
          .then(async (done) => {
            itemReads += done.stats.reads;
            completions += 1;
            if (completions % 50 === 0)
              process.stderr.write(
                `${label}: ${completions} items ended, ${retried} retried, ${((Date.now() - t0) / 1000).toFixed(0)} s\n`,
              );
            itemWrites += done.stats.writes;
            if (done.result.status === 'COMPLETED') queue.push(...done.result.jobs);
            const now = (await ref.get()).updateTime;
            if (now !== undefined && afterStart !== undefined && !now.isEqual(afterStart)) {
              callerWrites = 2;
              last = done.stats;
            }
            inFlight -= 1;
            pump();
          })
          .catch((err: unknown) => {
            // What runJob answers for a transaction that gave up (contention): a 5xx, and Cloud Tasks tries again.
            if (!/ABORTED|contention|lock timeout/i.test(String(err)))
              return reject(err instanceof Error ? err : new Error(String(err)));
            retried += 1;
            queue.push(job);
            inFlight -= 1;
            pump();
          });
      }
    };
    pump();
  });
  const seconds = (Date.now() - t0) / 1000;
  const caller = (await ref.get()).data() ?? {};
  const verdicts = (caller.variables as { verdicts?: unknown[] } | undefined)?.verdicts ?? [];
  return {
    label,
    seconds,
    start: startStats,
    itemReads,
    itemWrites,
    last,
    callerWrites: caller.status === 'COMPLETED' ? callerWrites : -1,
    retried,
    ended: completions,
    verdictsInOrder: verdicts.length === n && verdicts.every((v) => typeof v === 'string' && v.startsWith('ok:')),
  };
}

async function main(): Promise<void> {
  process.env.METADATA_SERVER_DETECTION ??= 'none';
  const n = arg('items', 500);
  const concurrency = arg('concurrency', 16);
  const deadlineMs = arg('deadline', 300) * 1000;
  const emulators = await useEmulators();
  try {
    const db = createFirestore(`bench-items-${Date.now().toString(36)}`);
    const never = '<bpmn:completionCondition>${numberOfCompletedInstances > 1000000}</bpmn:completionCondition>';
    const models = [await parseProcessModel(xml('')), await parseProcessModel(xml(never))];
    const engine = new Engine(models, {}, new Set(['inspect']));
    await runOnce(db, engine, 'items', 'warm-up', 50, concurrency, deadlineMs);
    process.stderr.write('warm-up done\n');
    const sharded = await runOnce(db, engine, 'items', 'sharded', n, concurrency, deadlineMs);
    const one = await runOnce(db, engine, 'items-one-shard', 'one document', n, concurrency, deadlineMs);
    for (const o of [sharded, one]) {
      process.stdout.write(
        `${o.label}: ${o.ended} of ${n} items ended in ${o.seconds.toFixed(1)} s (${(o.ended / o.seconds).toFixed(1)} items/s)${o.ended < n ? ', stopped at the deadline' : ''}; ` +
          `start ${o.start.reads} reads / ${o.start.writes} writes; per item ${(o.itemReads / Math.max(1, o.ended)).toFixed(2)} reads / ${(o.itemWrites / Math.max(1, o.ended)).toFixed(2)} writes; ` +
          `last item ${o.last.reads} reads / ${o.last.writes} writes; caller document written ${o.callerWrites} times; retried after contention: ${o.retried}; outputs complete: ${o.verdictsInOrder}\n`,
      );
    }
    process.stdout.write(
      `ratio one document / sharded: items per second ${(one.ended / one.seconds / (sharded.ended / sharded.seconds)).toFixed(2)}, reads per item ${(one.itemReads / Math.max(1, one.ended) / (sharded.itemReads / Math.max(1, sharded.ended))).toFixed(2)}, writes per item ${(one.itemWrites / Math.max(1, one.ended) / (sharded.itemWrites / Math.max(1, sharded.ended))).toFixed(2)}\n`,
    );
    await db.terminate();
  } finally {
    await emulators.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:items failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
