/**
 * One differential run: a drawn model through our engine and through
 * bpmn-engine, the same moves in both (whichever wait fast-check picks,
 * completed with the same variables or the same BPMN error), then the two
 * compared: at every move the waits must be the same; at the end the paths
 * (visits.ts) and the end state. The first difference is kept with
 * everything a report needs.
 */
import type { Graph } from './graph';
import { type EngineDriver, type Choice, type EndState, Looped, type Visit, type WaitKey } from './outcome';
import { OurDriver } from './our-driver';
import { ReferenceDriver } from './reference-driver';
import { multisetDiff, paths } from './visits';
import { modelXml } from './xml';
import { ModelError } from '../../../functions/src/bpmn/model';

/** How many moves a run makes at most (loops can go on for as long as the choices keep a flag up). */
export const MAX_MOVES = 16;

export type DifferenceKind = 'waits' | 'paths' | 'end';

export interface Side {
  readonly visits: readonly Visit[];
  readonly paths: readonly string[];
  readonly end: EndState;
  /** What the driver noticed on the way (bpmn-engine: joins that counted a discarded flow). */
  readonly notes: readonly string[];
}

export interface RunResult {
  readonly graph: Graph;
  /** compared; refused (our parser refused the model, nothing compared); reference looped; ours looped. */
  readonly outcome: 'compared' | 'refused' | 'reference looped' | 'ours looped';
  readonly refusal: string | null;
  readonly moves: readonly { readonly wait: WaitKey; readonly choice: Choice }[];
  readonly ours: Side | null;
  readonly reference: Side | null;
  /** The first difference: what differs and how, in words; null when the engines agree. */
  readonly difference: { readonly kind: DifferenceKind; readonly what: string } | null;
}

const NO_CHOICE: Choice = { pick: 0, vars: {}, error: null };

async function side(driver: EngineDriver, tamper = (v: Visit[]) => v): Promise<Side> {
  const visits = tamper(driver.visits());
  return { visits, paths: paths(visits), end: await driver.end(), notes: driver.notes() };
}

function endDifference(ours: EndState, ref: EndState): string | null {
  if (ours.status !== ref.status) return `ours ${ours.status}, bpmn-engine ${ref.status}`;
  if (ours.status === 'failed' && ours.failedAt.join() !== ref.failedAt.join())
    return `ours failed at ${ours.failedAt.join(', ')}, bpmn-engine at ${ref.failedAt.join(', ')}`;
  if (ours.status === 'running' && ours.waits.join() !== ref.waits.join())
    return `ours waits for ${ours.waits.join(', ')}, bpmn-engine for ${ref.waits.join(', ')}`;
  return null;
}

/** How a run is made: which driver runs our engine (CoreSim by default; the store's on the emulator), and the harness's self-test. */
export interface RunOptions {
  /** Starts our engine on the model; throws ModelError when our parser refuses it. */
  readonly ours?: (graph: Graph) => Promise<EngineDriver>;
  /** For the harness's own tests only: change what our engine is seen to pass, to prove the comparison notices. */
  readonly ourVisits?: (visits: Visit[]) => Visit[];
}

const pureCore = (graph: Graph): Promise<EngineDriver> => OurDriver.start(modelXml(graph, 'ours'), { ...graph.start });

/** Runs `graph` through both engines with `choices`, one per move. */
export async function runBoth(graph: Graph, choices: readonly Choice[], options: RunOptions = {}): Promise<RunResult> {
  const base = { graph, refusal: null, moves: [], ours: null, reference: null, difference: null };
  let ours: EngineDriver;
  try {
    ours = await (options.ours ?? pureCore)(graph);
  } catch (err) {
    if (err instanceof ModelError) return { ...base, outcome: 'refused', refusal: err.message };
    if (err instanceof Looped)
      return { ...base, outcome: 'ours looped', difference: { kind: 'end', what: err.message } };
    throw err;
  }
  const ref = await ReferenceDriver.start(modelXml(graph, 'reference'), { ...graph.start });
  const moves: { wait: WaitKey; choice: Choice }[] = [];
  let difference: RunResult['difference'] = null;
  let oursLooped = false;
  for (let i = 0; i < MAX_MOVES && !ref.looped; i++) {
    if ((await ours.end()).status === 'failed' || (await ref.end()).status === 'failed') break;
    const [w1, w2] = [await ours.waits(), await ref.waits()];
    if (w1.join() !== w2.join()) {
      difference = {
        kind: 'waits',
        what: `after ${i} moves ours waits for [${w1.join(', ')}], bpmn-engine for [${w2.join(', ')}]`,
      };
      break;
    }
    const choice = choices[i] ?? NO_CHOICE;
    const wait = w1[choice.pick % w1.length];
    if (wait === undefined) break;
    moves.push({ wait, choice });
    const scoped = graph.scoped.has(wait.slice(wait.indexOf(':') + 1));
    try {
      await ours.act(wait, choice, scoped);
    } catch (err) {
      if (!(err instanceof Looped)) throw err;
      oursLooped = true;
      difference = { kind: 'end', what: err.message };
      break;
    }
    await ref.act(wait, choice, scoped);
  }
  const oursSide = await side(ours, options.ourVisits);
  const refSide = await side(ref);
  const result = { ...base, moves, ours: oursSide, reference: refSide };
  if (oursLooped) return { ...result, outcome: 'ours looped', difference };
  if (ref.looped) {
    // Nothing to compare but whether ours stopped too: a STEP_LIMIT incident (or a refusal, counted above).
    const stopped = oursSide.end.detail.some((d) => d.startsWith('STEP_LIMIT'));
    return {
      ...result,
      outcome: 'reference looped',
      difference: stopped ? null : { kind: 'end', what: `bpmn-engine looped; ours ${oursSide.end.status}` },
    };
  }
  if (difference === null) {
    const { onlyA, onlyB } = multisetDiff(oursSide.paths, refSide.paths);
    if (onlyA.length > 0 || onlyB.length > 0)
      difference = {
        kind: 'paths',
        what: `paths only ours: [${onlyA.join(' | ')}]; only bpmn-engine: [${onlyB.join(' | ')}]`,
      };
  }
  if (difference === null) {
    const what = endDifference(oursSide.end, refSide.end);
    if (what !== null) difference = { kind: 'end', what };
  }
  return { ...result, outcome: 'compared', difference };
}
