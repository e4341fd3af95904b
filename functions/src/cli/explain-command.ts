import type { CliContext } from './context';
import { explain } from '../operations/explain';
import type { Explanation } from '../operations/explain-model';
import { explainFacts } from '../operations/explain-facts';
import { RefusedError } from '../operations/refused';

function printHuman(ctx: CliContext, e: Explanation): void {
  const lines = [
    `${e.id}: ${e.summary}`,
    ...(e.because.length > 0 ? ['because:', ...e.because.map((b) => `  - ${b}`)] : []),
    ...(e.versions !== undefined && e.versions.length > 0 ? ['versions:', ...e.versions.map((v) => `  - ${v}`)] : []),
    e.next.length > 0 ? 'next:' : 'next: nothing to do',
    ...e.next.map((n) => `  ${n}`),
  ];
  ctx.io.out(lines.join('\n'));
}

/** `inbox explain ID`: why a document is where it is, and what to do next. */
export async function explainCommand(ctx: CliContext, id: string): Promise<void> {
  const facts = await explainFacts(ctx.db(), id, ctx.config.relay.policy.bufferWindowMs, ctx.runtime.engine);
  if (facts === null) throw new RefusedError(`no inbox document ${id}: check the id (\`inbox list\` shows them)`);
  const e = explain(facts, ctx.now());
  if (ctx.json) ctx.io.out(JSON.stringify(e, null, 2));
  else printHuman(ctx, e);
}
