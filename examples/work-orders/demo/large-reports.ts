/**
 * The large-report scenarios (claim checks), pure: how a work order's claim
 * and invoice read in its line, the invariant that no offloaded payload is
 * orphaned and every report is billed by its item count, and the summary
 * the report prints after its table.
 */
import type { SentReport } from '../local/provider';
import { type LargeReport, type PlannedOrder, scenarioOf } from './plan';

/** A claim of an inbox document (`reference` or `offloaded`), the fields the demo reads. */
export interface ClaimView {
  readonly uri: string;
  readonly bucket: string;
  readonly object: string;
  readonly generation: string;
  /** `offloaded.bytes`; null for a reference (the document does not know its size). */
  readonly bytes: number | null;
}

/** The object a claim names, as read at its generation. */
export interface ObjectView {
  /** False when the name holds no object of that generation. */
  readonly exists: boolean;
  readonly bytes: number | null;
  /** Hex SHA-256 of its bytes: read for offloaded payloads only (a reference is stat'ed, as `inbox show` does). */
  readonly sha256: string | null;
}

/** The parts of an inbox document a claim's line needs. */
export interface ClaimDoc {
  readonly id: string;
  readonly status: string;
  readonly correlationKey: string | null;
  readonly payloadHash: string | null;
  readonly reference: ClaimView | null;
  readonly offloaded: ClaimView | null;
}

/** The parts of an invoice the line and the invariant need (invoice fields of jobs/handlers.ts). */
export interface BilledView {
  readonly workOrderId: string;
  readonly billedItems: number | null;
  readonly lineItemCount: number | null;
  readonly report: string | null;
}

/** What the large-report scenarios read, besides the inbox documents and invoices. */
export interface ReportState {
  readonly inbox: readonly ClaimDoc[];
  readonly invoices: readonly BilledView[];
  /** The object of each claim of this run's documents, by the claim's uri. */
  readonly objects: Readonly<Record<string, ObjectView>>;
  /** Objects under `payloads/<id>/` in the inbox's bucket whose id is one of this run's documents or published messages. */
  readonly payloadObjects: ReadonlyArray<{ readonly inboxId: string; readonly name: string }>;
  /** The reports the simulated provider sent, per work order of this run. */
  readonly reportsSent: Readonly<Record<string, SentReport>>;
}

export const mib = (bytes: number): string => `${(bytes / 1_048_576).toFixed(1)} MiB`;

/** The claim part of a line: `reference FOUND`, `offloaded 5.1 MiB`, or what is wrong with it. */
export function describeClaim(state: ReportState, workOrderId: string, route: LargeReport['route']): string {
  const docs = state.inbox.filter((d) => d.correlationKey === workOrderId);
  const doc = docs.find((d) => d.status === 'DONE') ?? docs[0];
  if (doc === undefined) return 'no claim';
  if (route === 'reference') {
    if (doc.reference === null) return doc.offloaded === null ? 'no reference' : 'offloaded, not by reference';
    const sent = state.reportsSent[workOrderId]?.uri ?? null;
    if (sent !== null && sent !== doc.reference.uri)
      return `reference ${doc.reference.uri}, not the one sent (${sent})`;
    const object = state.objects[doc.reference.uri];
    return object === undefined ? 'reference NOT CHECKED' : object.exists ? 'reference FOUND' : 'reference MISSING';
  }
  if (doc.offloaded === null) return doc.reference === null ? 'not offloaded' : 'by reference, not offloaded';
  const object = state.objects[doc.offloaded.uri];
  if (object === undefined) return 'offloaded, object NOT CHECKED';
  if (!object.exists) return 'offloaded, object MISSING';
  if (object.sha256 !== doc.payloadHash) return 'offloaded, object sha256 ≠ payloadHash';
  if (object.bytes !== doc.offloaded.bytes)
    return `offloaded ${doc.offloaded.bytes ?? '?'} bytes, object ${object.bytes ?? '?'} bytes`;
  return `offloaded ${mib(doc.offloaded.bytes ?? 0)}`;
}

/** The invoice part of a large report's line: `invoiced N line items`, or how it was billed instead. */
export function describeBilled(state: ReportState, workOrderId: string): string {
  const invoices = state.invoices.filter((i) => i.workOrderId === workOrderId);
  const invoice = invoices[0];
  if (invoice === undefined) return 'not invoiced';
  const more = invoices.length > 1 ? ` (+${invoices.length - 1} more invoices)` : '';
  if (invoice.lineItemCount === null) return `invoiced ${invoice.billedItems ?? '?'} completed items, no report${more}`;
  if (invoice.billedItems !== invoice.lineItemCount)
    return `invoiced ${invoice.billedItems ?? '?'} of ${invoice.lineItemCount} line items${more}`;
  return `invoiced ${invoice.lineItemCount} line items${more}`;
}

/**
 * Every offloaded payload has its document (the object's id is a document
 * that names that very object), every offloaded document's object is there
 * with the document's size and hash, and every report the provider sent
 * whose completion is DONE was billed exactly once by its item count.
 */
export function reportsAccounted(
  plan: readonly PlannedOrder[],
  state: ReportState,
): { readonly name: string; readonly violations: readonly string[] } {
  const violations: string[] = [];
  const byId = new Map(state.inbox.map((d) => [d.id, d]));
  for (const o of state.payloadObjects) {
    const doc = byId.get(o.inboxId);
    if (doc === undefined) violations.push(`${o.name}: no document ${o.inboxId.slice(0, 12)}`);
    else if (doc.offloaded?.object !== o.name)
      violations.push(`${o.name}: its document names ${doc.offloaded?.object ?? 'no offloaded object'}`);
  }
  for (const d of state.inbox) {
    if (d.offloaded === null) continue;
    const object = state.objects[d.offloaded.uri];
    if (object?.exists !== true)
      violations.push(
        `${d.id.slice(0, 12)} (${d.correlationKey ?? 'no key'}): offloaded object ${object === undefined ? 'not checked' : 'missing'}`,
      );
    else if (object.sha256 !== d.payloadHash || object.bytes !== d.offloaded.bytes)
      violations.push(
        `${d.id.slice(0, 12)} (${d.correlationKey ?? 'no key'}): offloaded object differs from its document (bytes or sha256)`,
      );
  }
  for (const o of plan)
    if (scenarioOf(o.scenario).report !== undefined && state.reportsSent[o.workOrderId] === undefined)
      violations.push(`${o.workOrderId}: the provider sent no report`);
  for (const [workOrderId, sent] of Object.entries(state.reportsSent)) {
    if (!state.inbox.some((d) => d.correlationKey === workOrderId && d.status === 'DONE')) continue;
    const invoices = state.invoices.filter((i) => i.workOrderId === workOrderId);
    const invoice = invoices[0];
    if (invoices.length !== 1 || invoice === undefined)
      violations.push(`${workOrderId}: ${invoices.length} invoices for a DONE report`);
    else if (invoice.lineItemCount !== sent.lineItems || invoice.billedItems !== sent.lineItems)
      violations.push(
        `${workOrderId}: sent ${sent.lineItems} line items, billed ${invoice.billedItems ?? 'none'} (line items ${invoice.lineItemCount ?? 'none'})`,
      );
  }
  return { name: 'every offloaded payload has its document, every DONE report billed by its item count', violations };
}

/** One large report of the run, for the summary after the table. */
export interface LargeReportSummary {
  readonly workOrderId: string;
  readonly route: LargeReport['route'];
  /** Items the provider sent (null: it sent none). */
  readonly lineItems: number | null;
  /** Bytes of the object the process reads: the provider's (by reference) or the inbox's (offloaded). */
  readonly bytes: number | null;
  readonly uri: string | null;
  /** The inbox document of its completion, and its status. */
  readonly inboxId: string | null;
  readonly status: string | null;
  /** Its line is what the scenario expects. */
  readonly ok: boolean;
}

/** The large reports of a run; `lineOk` says whether an order's line is what its scenario expects. */
export function largeReports(
  plan: readonly PlannedOrder[],
  state: ReportState,
  lineOk: (o: PlannedOrder) => boolean,
): LargeReportSummary[] {
  return plan.flatMap((o) => {
    const report = scenarioOf(o.scenario).report;
    if (report === undefined) return [];
    const doc =
      state.inbox.find((d) => d.correlationKey === o.workOrderId && d.status === 'DONE') ??
      state.inbox.find((d) => d.correlationKey === o.workOrderId);
    const claim = report.route === 'reference' ? doc?.reference : doc?.offloaded;
    const object = claim === null || claim === undefined ? undefined : state.objects[claim.uri];
    const sent = state.reportsSent[o.workOrderId];
    return [
      {
        workOrderId: o.workOrderId,
        route: report.route,
        lineItems: sent?.lineItems ?? null,
        bytes: object?.bytes ?? null,
        uri: claim?.uri ?? sent?.uri ?? null,
        inboxId: doc?.id ?? null,
        status: doc?.status ?? null,
        ok: lineOk(o),
      },
    ];
  });
}

/** The report's lines on the large reports: what each was, and the command that shows one. */
export function formatLargeReports(reports: readonly LargeReportSummary[]): string[] {
  if (reports.length === 0) return [];
  const one = (r: LargeReportSummary): string => {
    const size = `${r.lineItems ?? 'no'} items${r.bytes === null ? '' : `, ${mib(r.bytes)}`}`;
    return `${r.workOrderId} ${r.route === 'reference' ? 'by reference' : 'offloaded'} (${size}${r.uri === null ? '' : `, ${r.uri}`})`;
  };
  const verdict = reports.every((r) => r.ok)
    ? `${reports.length === 2 ? 'both' : 'all'} DONE and invoiced with the right count`
    : 'NOT all DONE and invoiced with the right count';
  const ids = reports.flatMap((r) => (r.inboxId === null ? [] : [r.inboxId]));
  return [
    `Large reports: ${reports.map(one).join(', ')} — ${verdict}.`,
    ...(ids.length === 0
      ? []
      : [`  An operator sees one, its claim and its object with: npm run inbox -- show ${ids[0] ?? ''}`]),
  ];
}
