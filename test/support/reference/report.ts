/**
 * A difference as a reader needs it to reproduce and judge it: what
 * differs, the moves that led there, both engines' paths and end states,
 * and the model as our engine read it.
 */
import type { RunResult, Side } from './compare';
import { modelXml } from './xml';

const sideText = (name: string, s: Side | null): string[] =>
  s === null
    ? [`${name}: not run`]
    : [
        `${name}: ${s.end.status}${s.end.waits.length > 0 ? `, waits for ${s.end.waits.join(', ')}` : ''}${
          s.end.failedAt.length > 0 ? `, failed at ${s.end.failedAt.join(', ')}` : ''
        }`,
        ...s.end.detail.map((d) => `  ${d}`),
        `  paths: ${s.paths.join('  |  ')}`,
      ];

export function report(result: RunResult, title = 'a difference nothing in known.ts explains'): string {
  const moves = result.moves.map(({ wait, choice }) => {
    const vars = Object.entries(choice.vars)
      .map(([k, v]) => `${k}=${String(v)}`)
      .join(' ');
    return wait.startsWith('job:') && choice.error !== null
      ? `${wait} throws ${choice.error}`
      : `${wait}${vars === '' ? '' : ` (${vars})`}`;
  });
  const start = Object.entries(result.graph.start)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(' ');
  return [
    `${title} (${result.graph.origin} model, ${result.outcome})`,
    `difference: ${result.difference === null ? 'none' : `${result.difference.kind}: ${result.difference.what}`}`,
    `start: ${start}`,
    `moves: ${moves.length === 0 ? '(none)' : moves.join(', ')}`,
    ...sideText('ours', result.ours),
    ...sideText('bpmn-engine', result.reference),
    result.refusal === null ? '' : `our parser refused it: ${result.refusal}`,
    'the model (as our engine reads it; bpmn-engine reads the same ids, see xml.ts):',
    modelXml(result.graph, 'ours'),
  ]
    .filter((line) => line !== '')
    .join('\n');
}
