/**
 * The chaos run's operator: repairs made while messages arrive, relays die,
 * jobs retry and timers fire, the way a person makes them with the CLI: a
 * `--dry-run`, a pause to read it, then the real run held to the dry run's
 * `--expect` line (refused, changing nothing, if the process moved on in
 * between). Which order or document is picked comes from the plan's seed and
 * from what the store holds at that moment.
 */
import type { Firestore } from '@google-cloud/firestore';
import { EXIT } from '../../../functions/src/cli/failures';
import { COLLECTIONS } from '../../../functions/src/engine/store/collections';
import { INBOX } from '../../../functions/src/inbox/document';
import { INSPECTION } from './app/inspection';
import type { PlannedRepair } from './plan-schedule';

/** The CLI in process: `inbox ARGV` on the run's project, its exit code and output. */
export type OperatorCli = (
  argv: readonly string[],
) => Promise<{ readonly code: number; readonly out: string; readonly err: string }>;

/** What the operator's repairs came to. */
export interface OperatorTally {
  /** Tokens cancelled on purpose (their orders end without an invoice, recorded on the instance). */
  cancelled: number;
  /** Tokens put back on their activity. */
  moved: number;
  requeued: number;
  /** Refused by the dry run (an unreadable document, a key collision, a token that ended). */
  refusedAtPreview: number;
  /** Refused at the confirmation: what the dry run read changed during the pause. */
  refusedAtConfirm: number;
  /** The command failed (Firestore still restarting after the operator's wait, or the confirmation cut off): nothing done, as the CLI said. */
  failed: number;
  /** No candidate at that moment (no running order, nothing parked). */
  nothingToDo: number;
  /** Not confirmed: the dry run showed the token elsewhere than where the operator meant to put it back (it had moved on). */
  abandoned: number;
}

export const emptyTally = (): OperatorTally => ({
  cancelled: 0,
  moved: 0,
  requeued: 0,
  refusedAtPreview: 0,
  refusedAtConfirm: 0,
  failed: 0,
  nothingToDo: 0,
  abandoned: 0,
});

export interface OperatorDeps {
  readonly db: Firestore;
  readonly cli: OperatorCli;
  /** Instances left alone: the racing orders, whose timer must race the last tranche undisturbed. */
  readonly leaveAlone: ReadonlySet<string>;
  readonly tally: OperatorTally;
  readonly progress: (line: string) => void;
  /** How long to keep starting a repair over while the CLI finds no Firestore; default 90 s. */
  readonly unreachableWaitMs?: number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
/** How often, and how long apart, the operator looks for a running order before giving a repair up. */
const CANDIDATE_LOOKS = 40;
const CANDIDATE_LOOK_EVERY_MS = 250;
/** How long the operator keeps trying while the CLI says Firestore does not answer (a restart under a busy machine takes its time), and how often. */
const UNREACHABLE_WAIT_MS = 90_000;
const UNREACHABLE_LOOK_EVERY_MS = 1_000;
const pickOf = <T>(items: readonly T[], pick: number): T | undefined =>
  items[Math.min(items.length - 1, Math.floor(pick * items.length))];

/**
 * A live token of a running order, not one waiting at a join: the instance,
 * the token and where it is. `pick` chooses the instance, and among its
 * tokens (the second model's three branches) one too, so a move lands on a
 * tranche wait, the inspection's step inside its subprocess, "Record the
 * defects", the user task, "Ask the approvers" (its token waiting for the
 * items: put back, it terminates them and starts the items over) or one
 * of its items (an instance of its own with the order's business key) alike.
 * A cancel leaves the second model's orders and their items alone: a branch
 * cancelled before its parallel join leaves the join waiting for good (a
 * JOIN_INCOMPLETE incident, the engine's answer), not a fault to survive,
 * and an item cancelled ends without an answer. A token waiting at a join
 * is never moved: put back on the join, it would stand for the first flow
 * still missing, not its own. Nor is a subprocess's token (WAITING_SCOPE):
 * the engine's move-token leaves the tokens inside it running and starts the
 * subprocess again beside them (a defect of the engine's placeToken, which,
 * unlike cancel-token, does not end what is inside; see docs/reliability.md),
 * so the run moves the token inside the subprocess instead.
 */
async function liveToken(
  deps: OperatorDeps,
  repair: PlannedRepair,
): Promise<{ instanceId: string; processKey: string; executionId: string; activityId: string } | null> {
  const running = (
    await deps.db
      .collection(COLLECTIONS.instances)
      .where('status', '==', 'RUNNING')
      .select('activeExecutionIds', 'tokens', 'processKey')
      .get()
  ).docs
    .filter((d) => !deps.leaveAlone.has(d.id))
    .filter((d) => repair.kind !== 'cancel' || String(d.get('processKey')).split('#')[0] !== INSPECTION.processKey)
    .sort((a, b) => a.id.localeCompare(b.id));
  const chosen = pickOf(running, repair.pick);
  if (chosen === undefined) return null;
  const tokens = (chosen.get('tokens') ?? {}) as Record<string, { activityId?: string; status?: string }>;
  const movable = ((chosen.get('activeExecutionIds') ?? []) as string[]).filter(
    (id) => tokens[id]?.status !== 'WAITING_JOIN' && tokens[id]?.status !== 'WAITING_SCOPE',
  );
  const executionId = movable[Math.floor(repair.pick * 997) % Math.max(1, movable.length)];
  const token = executionId === undefined ? undefined : tokens[executionId];
  if (executionId === undefined || token?.activityId === undefined) return null;
  return {
    instanceId: chosen.id,
    processKey: String(chosen.get('processKey')),
    executionId,
    activityId: token.activityId,
  };
}

/**
 * A dry run, the pause, the real run with the dry run's --expect (when it
 * printed one); how it ended. `confirmIf` reads the dry run's basis as the
 * operator reads the preview: false, and the repair is not confirmed.
 */
async function previewThenConfirm(
  deps: OperatorDeps,
  argv: readonly string[],
  pauseMs: number,
  confirmIf: (facts: Readonly<Record<string, string>>) => boolean = () => true,
): Promise<'DONE' | 'REFUSED_AT_PREVIEW' | 'REFUSED_AT_CONFIRM' | 'FAILED' | 'ABANDONED' | 'UNREACHABLE'> {
  const dry = await deps.cli(['--json', ...argv, '--dry-run']);
  if (dry.code === 1) return 'REFUSED_AT_PREVIEW';
  if (dry.code !== 0) {
    deps.progress(
      `operator: ${argv.slice(0, 2).join(' ')} --dry-run failed (exit ${dry.code}): ${dry.err.slice(0, 300)}`,
    );
    return dry.code === EXIT.UNREACHABLE ? 'UNREACHABLE' : 'FAILED';
  }
  const preview = JSON.parse(dry.out) as { expect?: string | null; basis?: { facts?: Record<string, string> } | null };
  if (!confirmIf(preview.basis?.facts ?? {})) return 'ABANDONED';
  const expect = preview.expect ?? null;
  await sleep(pauseMs);
  const real = await deps.cli([...argv, ...(expect === null ? [] : ['--expect', expect])]);
  if (real.code === 0) return 'DONE';
  deps.progress(
    `operator: ${argv.slice(0, 2).join(' ')} ${real.code === 1 ? 'refused' : 'failed'}: ${real.err.slice(0, 300)}`,
  );
  return real.code === 1 ? 'REFUSED_AT_CONFIRM' : 'FAILED';
}

/** Tallies how a repair ended; 'UNREACHABLE' (nothing done, Firestore away) is not an end: {@link operate} tries again. */
function count(
  tally: OperatorTally,
  outcome: Awaited<ReturnType<typeof previewThenConfirm>>,
  done: 'cancelled' | 'moved' | 'requeued',
): 'UNREACHABLE' | 'TALLIED' {
  if (outcome === 'UNREACHABLE') return outcome;
  if (outcome === 'DONE') tally[done] += 1;
  else if (outcome === 'REFUSED_AT_PREVIEW') tally.refusedAtPreview += 1;
  else if (outcome === 'REFUSED_AT_CONFIRM') tally.refusedAtConfirm += 1;
  else if (outcome === 'ABANDONED') tally.abandoned += 1;
  else tally.failed += 1;
  return 'TALLIED';
}

function nothing(deps: OperatorDeps, why: string): 'TALLIED' {
  deps.tally.nothingToDo += 1;
  deps.progress(`operator: ${why}`);
  return 'TALLIED';
}

/**
 * Makes one planned repair. Which orders were cancelled on purpose is read
 * back from the store (the repair records), not from here: a command that
 * failed after its commit landed cancelled its token all the same.
 */
export async function operate(deps: OperatorDeps, repair: PlannedRepair): Promise<void> {
  // The dry run found no Firestore (a restart under way): nothing was done; as a person would, wait and start the repair over.
  const waitMs = deps.unreachableWaitMs ?? UNREACHABLE_WAIT_MS;
  for (const until = Date.now() + waitMs; ;) {
    if ((await attempt(deps, repair)) !== 'UNREACHABLE') return;
    if (Date.now() >= until) {
      deps.tally.failed += 1;
      deps.progress(`operator: ${repair.kind}: Firestore did not answer for ${waitMs} ms; given up`);
      return;
    }
    await sleep(UNREACHABLE_LOOK_EVERY_MS);
  }
}

/** One try at a repair: what it came to is tallied, but for 'UNREACHABLE', which {@link operate} tries again. */
async function attempt(deps: OperatorDeps, repair: PlannedRepair): Promise<'UNREACHABLE' | 'TALLIED'> {
  try {
    if (repair.kind === 'requeue') {
      const parked = (await deps.db.collection(INBOX).where('status', '==', 'PARKED').select().get()).docs
        .map((d) => d.id)
        .sort();
      const id = pickOf(parked, repair.pick);
      if (id === undefined) return nothing(deps, 'requeue: nothing is PARKED');
      const outcome = await previewThenConfirm(deps, ['requeue', id], repair.pauseMs);
      deps.progress(`operator: requeue ${id.slice(0, 12)}: ${outcome}`);
      return count(deps.tally, outcome, 'requeued');
    }
    // An operator repairs what is under way: while nothing is (orders not started yet, or all done), look again a little later.
    let token = await liveToken(deps, repair);
    for (let look = 1; token === null && look < CANDIDATE_LOOKS; look++) {
      await sleep(CANDIDATE_LOOK_EVERY_MS);
      token = await liveToken(deps, repair);
    }
    if (token === null) return nothing(deps, `${repair.kind}: no running order to repair`);
    const target = ['--instance', token.instanceId, '--execution', token.executionId];
    const argv =
      repair.kind === 'cancel'
        ? ['repair', 'cancel-token', ...target]
        : ['repair', 'move-token', ...target, '--activity', token.activityId];
    // A move puts the token back where it is; a preview that shows it elsewhere (it moved on since it was looked up) would rewind it: not confirmed.
    const outcome = await previewThenConfirm(
      deps,
      argv,
      repair.pauseMs,
      (facts) => repair.kind === 'cancel' || facts.at === token.activityId,
    );
    deps.progress(
      `operator: ${argv[1] ?? ''} of ${token.instanceId.slice(0, 12)} (${token.processKey}) at ${token.activityId}: ${outcome}`,
    );
    return count(deps.tally, outcome, repair.kind === 'cancel' ? 'cancelled' : 'moved');
  } catch (err) {
    // Reading the candidates failed (Firestore restarting): the operator tries nothing this time.
    deps.tally.failed += 1;
    deps.progress(`operator: ${repair.kind} not attempted: ${err instanceof Error ? err.message : String(err)}`);
    return 'TALLIED';
  }
}
