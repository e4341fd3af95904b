/**
 * The verdict on one run and the count over many: what the test asserts
 * and the summary line the suite and `npm run test:reference` print.
 */
import type { RunResult } from './compare';
import { explain, explainInconsistency, type KnownDifference } from './known';

export type Verdict =
  /** The engines agree (or a refusal or a loop, which compare nothing further). */
  | { readonly ok: true; readonly known: null }
  /** They differ in a way known.ts lists. */
  | { readonly ok: true; readonly known: KnownDifference }
  /** They differ in a way nothing explains, or our engine contradicts itself: the test fails. */
  | { readonly ok: false; readonly why: string };

/**
 * A run passes when the engines agree and ours is consistent with itself
 * (our drivers check that alone: a completed instance has nothing left, a
 * timer is PENDING only while its token waits with it), or when known.ts
 * explains what is wrong (a known inconsistency is a TODO of kind A).
 */
export function judge(result: RunResult): Verdict {
  const inconsistent = result.ours?.end.detail.find((d) => d.startsWith('INCONSISTENT'));
  const ownKnown = inconsistent === undefined ? null : explainInconsistency(result);
  if (inconsistent !== undefined && ownKnown === null)
    return { ok: false, why: `our engine contradicts itself: ${inconsistent}` };
  if (result.difference === null) return { ok: true, known: ownKnown };
  const known = explain(result);
  return known === null ? { ok: false, why: 'a difference nothing in known.ts explains' } : { ok: true, known };
}

export class Tally {
  generated = 0;
  compared = 0;
  refused = 0;
  referenceLooped = 0;
  oursLooped = 0;
  agreed = 0;
  unexplained = 0;
  readonly known = new Map<string, number>();
  /** Why ours refused models, by message with ids blurred: a generator drawing shapes ours cannot load shows here. */
  readonly refusals = new Map<string, number>();

  add(result: RunResult, verdict: Verdict): void {
    this.generated += 1;
    if (result.outcome === 'refused') {
      this.refused += 1;
      const reason = (result.refusal ?? '').replace(/\b([a-zA-Z]+)\d+\b/g, '$1').slice(0, 120);
      this.refusals.set(reason, (this.refusals.get(reason) ?? 0) + 1);
    } else if (result.outcome === 'reference looped') this.referenceLooped += 1;
    else if (result.outcome === 'ours looped') this.oursLooped += 1;
    else this.compared += 1;
    if (!verdict.ok) this.unexplained += 1;
    else if (verdict.known !== null) this.known.set(verdict.known.id, (this.known.get(verdict.known.id) ?? 0) + 1);
    else if (result.outcome === 'compared') this.agreed += 1;
  }

  /** One line: models generated, compared, refused at load by ours, reference looped, differences by kind. */
  line(): string {
    const known = [...this.known.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([id, n]) => `${id} ${n}`)
      .join(', ');
    return [
      `models ${this.generated}`,
      `compared ${this.compared} (agreed ${this.agreed})`,
      `refused at load by ours ${this.refused}`,
      `reference looped ${this.referenceLooped}`,
      `ours looped ${this.oursLooped}`,
      `differences: unexplained ${this.unexplained}${known === '' ? '' : `; known: ${known}`}`,
    ].join(' | ');
  }
}
