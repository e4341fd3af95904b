import type { AppContext } from '../../functions/src/app';
import { type CompletionReport, CompletionReportSchema, REPORT_VARIABLE } from './messages';

/**
 * What "Create invoice" bills, from the instance's variables: the report a
 * claim check names (`completionReport`: the sender's object by reference,
 * or the inbox's offloaded payload), else the message's inline `lineItems`,
 * else its `completedItems` count (the messages from before line items).
 */
export type Billing =
  | { readonly from: 'REPORT'; readonly uri: string; readonly lineItemCount: number }
  | { readonly from: 'INLINE'; readonly lineItemCount: number }
  | { readonly from: 'COMPLETED_ITEMS'; readonly completedItems: number | null };

/** Why a report cannot be billed, for good: the job fails at once and the instance shows it (INCIDENT / JOB_FAILED). */
export type ReportProblem = { readonly ok: false; readonly why: string };

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/**
 * Reads the completion report a `gs://bucket/object#generation` names,
 * pinned to that generation, and checks it against CompletionReportSchema.
 * MISSING, CHANGED, not JSON, not a report, not a reference at all: a
 * ReportProblem (no retry brings the right bytes). A storage failure (an
 * outage, a refused permission) is thrown: the job is retried.
 */
export async function readCompletionReport(
  readClaim: AppContext['readClaim'],
  uri: string,
): Promise<{ readonly ok: true; readonly report: CompletionReport } | ReportProblem> {
  const read = await readClaim(uri);
  if (read.kind === 'INVALID')
    return {
      ok: false,
      why: `the ${REPORT_VARIABLE} variable ${JSON.stringify(uri.slice(0, 200))} is not a reference: ${read.why}`,
    };
  if (read.kind === 'MISSING')
    return {
      ok: false,
      why: `the completion report ${uri} is MISSING: no object of that name exists any more (deleted after the message was received); the sender uploads it again and sends a new message`,
    };
  if (read.kind === 'CHANGED')
    return {
      ok: false,
      why: `the completion report ${uri} CHANGED: its name holds generation ${read.liveGeneration} now, not the one the message referenced; the sender sends a new message with the new reference`,
    };
  let json: unknown;
  try {
    json = JSON.parse(read.data.toString('utf8'));
  } catch (err) {
    return {
      ok: false,
      why: `the completion report ${uri} is not JSON (${read.data.length} bytes): ${messageOf(err)}`,
    };
  }
  const parsed = CompletionReportSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue === undefined || issue.path.length === 0 ? '' : ` at ${issue.path.join('.')}`;
    return {
      ok: false,
      why: `the completion report ${uri} is not a completion report ({lineItems: [{itemId, quantity}]})${where}: ${issue?.message ?? 'invalid'}`,
    };
  }
  return { ok: true, report: parsed.data };
}

/**
 * What to bill from the variables, reading the report when there is one; a
 * ReportProblem when it cannot be billed, also when the report names
 * another work order than `workOrderId` (the sender referenced the wrong
 * upload: billing it would bill someone else's items).
 */
export async function billingOf(
  variables: Readonly<Record<string, unknown>>,
  readClaim: AppContext['readClaim'],
  workOrderId: string,
): Promise<Billing | ReportProblem> {
  const uri = variables[REPORT_VARIABLE];
  if (uri !== undefined && uri !== null) {
    if (typeof uri !== 'string')
      return { ok: false, why: `the ${REPORT_VARIABLE} variable is not a gs:// reference (a ${typeof uri})` };
    const read = await readCompletionReport(readClaim, uri);
    if (!read.ok) return read;
    const named = read.report.workOrderId;
    if (named !== undefined && named !== workOrderId)
      return {
        ok: false,
        why: `the completion report ${uri} is the report of work order ${named}, not ${workOrderId}; the sender sends a new message with the right reference`,
      };
    return { from: 'REPORT', uri, lineItemCount: read.report.lineItems.length };
  }
  const inline = variables['lineItems'];
  if (Array.isArray(inline)) return { from: 'INLINE', lineItemCount: inline.length };
  const completed = variables['completedItems'];
  return { from: 'COMPLETED_ITEMS', completedItems: typeof completed === 'number' ? completed : null };
}
