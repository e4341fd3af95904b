/**
 * The lines and JSON of a model diff (`inbox model diff`, `inbox model
 * impact`, the deploy's dry run), with what sits at each removed or
 * changed element when the project was read. Pure.
 */
import { type ModelDiff, touchedElements } from '../bpmn/model-diff';
import { type ElementLoad, loadAt, type ProcessLoad } from '../operations/model-impact';

/** What sits at one removed or changed element. */
export interface ElementImpact extends ElementLoad {
  readonly id: string;
}

/** The live part of a diff: what was read, and the load of each removed or changed element. */
export interface DiffImpact {
  readonly instancesRead: number;
  readonly capped: boolean;
  readonly legacyInstances: number;
  /** Instances of this version are not counted at the elements (a change does not touch them). */
  readonly skippedVersion: string;
  readonly elements: readonly ElementImpact[];
}

/** The impact of `diff` from the load read. */
export function impactOf(diff: ModelDiff, load: ProcessLoad): DiffImpact {
  return {
    instancesRead: load.instancesRead,
    capped: load.capped,
    legacyInstances: load.legacyInstances,
    skippedVersion: diff.toVersion,
    elements: touchedElements(diff).map((id) => ({ id, ...loadAt(load, id) })),
  };
}

/** "3 running + 1 in incident tokens, 2 pending jobs, 3 timers, 0 user tasks", or "nothing waits here". */
export function loadWords(load: ElementLoad): string {
  const total = load.tokensRunning + load.tokensIncident + load.pendingJobs + load.scheduledTimers + load.openUserTasks;
  if (total === 0) return 'nothing waits here';
  return `${load.tokensRunning} running + ${load.tokensIncident} in incident tokens, ${load.pendingJobs} pending jobs, ${load.scheduledTimers} scheduled timers, ${load.openUserTasks} open user tasks`;
}

const value = (text: string | null): string => (text === null ? '(none)' : text);

/** The lines of one diff; `from` and `to` name what was compared (files, `version V`). */
export function diffLines(diff: ModelDiff, from: string, to: string, impact: DiffImpact | null): string[] {
  const lines = [`${diff.processKey}: ${from} → ${to}`];
  if (diff.identical) {
    lines.push('  no element or flow differs');
  }
  const live = (id: string): string => {
    const found = impact?.elements.find((e) => e.id === id);
    return found === undefined ? '' : `  [${loadWords(found)}]`;
  };
  const named = (e: { id: string; kind: string; name: string | null }): string =>
    `${e.id} (${e.kind}${e.name === null ? '' : `, "${e.name}"`})`;
  for (const e of diff.added) lines.push(`  added    ${named(e)}`);
  for (const e of diff.removed) lines.push(`  removed  ${named(e)}${live(e.id)}`);
  for (const e of diff.changed) {
    lines.push(`  changed  ${named(e)}${live(e.id)}`);
    for (const c of e.changes) lines.push(`             ${c.aspect}: ${value(c.before)} ⇒ ${value(c.after)}`);
  }
  for (const f of diff.flowsAdded)
    lines.push(
      `  flow added    ${f.id}: ${f.sourceId} → ${f.targetId}${f.condition === null ? '' : ` if ${f.condition}`}`,
    );
  for (const f of diff.flowsRemoved)
    lines.push(
      `  flow removed  ${f.id}: ${f.sourceId} → ${f.targetId}${f.condition === null ? '' : ` if ${f.condition}`}`,
    );
  for (const f of diff.flowsChanged)
    lines.push(
      `  flow changed  ${f.id}: ${f.changes.map((c) => `${c.aspect} ${value(c.before)} ⇒ ${value(c.after)}`).join('; ')}`,
    );
  if (impact !== null) lines.push(`  ${impactSummary(impact)}`);
  return lines;
}

/** What the counts are of: how many instances were read, which were left out, whether the bound was reached. */
export function impactSummary(impact: DiffImpact): string {
  const parts = [
    `live: ${impact.instancesRead} RUNNING and INCIDENT instances read (those of version ${impact.skippedVersion} not counted at the elements)`,
  ];
  if (impact.legacyInstances > 0)
    parts.push(`${impact.legacyInstances} stored before 0.6.0 not counted (their tokens are in executions/)`);
  if (impact.capped)
    parts.push('CAPPED: more instances or timers than the bound were left unread, so the counts are lower bounds');
  return parts.join('; ');
}
