import type { Engine } from '../engine/engine';
import { BasisChangedError, formatBasis, type RepairBasis } from '../engine/repair-basis';
import type { DuplicateWaitingPoint } from '../engine/store/apply';
import { cancelTokenRun } from '../engine/store/cancel-token';
import { refs } from '../engine/store/collections';
import { moveToken } from '../engine/store/move-token';
import { newRequestId } from '../engine/store/repair-request';
import { resolveIncident, type ResolvedIncidents } from '../engine/store/resolve-incident';
import type { Repaired } from '../engine/store/token-repair';
import type { WriteSink } from '../engine/store/unit-of-work';
import type { JobState, TimerState } from '../engine/state';
import type { OffloadedPayload } from '../inbox/claim-check';
import { INBOX } from '../inbox/document';
import { deleteRawChunks } from '../inbox/store-message';
import { logDuplicates } from '../jobs/dispatch';
import type { InboxView } from '../relay/inbox-writes';
import { basisChangeText } from './basis-change';
import { dispatchAfterRepair } from './dispatch-after-repair';
import { checkRequeue, park, requeue, type RequeueResult } from './inbox-repairs';
import { chunkedDraft, isChunkedPayload, offloadChunked } from './offload-chunked';
import { RefusedError } from './refused';
import { requeueFit } from './requeue-fit';
import { retireVersion, type RetiredVersion } from './retire-version';
import type { Actor, OperationsDeps, RepairOutcome, RepairRequest } from './types';

/**
 * The operator's repairs, one implementation for the `inbox` CLI and the
 * console. A preview is the real repair's transaction, rolled back
 * (engine/store/repair-request.ts): the same reads, checks and refusals, and
 * the writes it would make, with nothing written, dispatched or logged.
 */

/** How a repair runs: for real or as a preview, by whom, and its request id (default: a new one). */
export interface RepairRunOptions {
  readonly preview: boolean;
  readonly actor: Actor;
  /** The console sends the preview's id with its confirmation; a preview never records it, so it is never "already applied". */
  readonly requestId?: string;
  /**
   * The basis the preview returned: the real run refuses (nothing done) if
   * what it acts on changed since. Absent: the repair reads and acts in one
   * transaction, as a run without a preview does.
   */
  readonly expect?: RepairBasis;
}

/** A repair's outcome and what the repair function itself returned (the CLI prints that as it always has). */
export interface RepairRun<R> {
  readonly outcome: RepairOutcome;
  readonly result: R;
}

type Req<K extends RepairRequest['kind']> = Extract<RepairRequest, { kind: K }>;

/** What a run hands to {@link settle}, besides its request and options. */
interface Done {
  readonly target: string;
  readonly summary: string;
  readonly alreadyApplied: boolean;
  readonly basis: RepairBasis | null;
  readonly jobs: readonly JobState[];
  readonly timers: readonly TimerState[];
  readonly duplicates: readonly DuplicateWaitingPoint[];
}

const NOTHING_CREATED = { jobs: [], timers: [], duplicates: [] } as const;

/**
 * Runs one repair and returns its outcome. Throws a refusal
 * (operations/refused.ts, isRefusal) with the reason in words, in a preview
 * exactly as in the real run; anything else is a failure.
 */
export async function runRepairRequest(
  deps: OperationsDeps,
  request: RepairRequest,
  options: RepairRunOptions,
): Promise<RepairOutcome> {
  switch (request.kind) {
    case 'requeue':
      return (await requeueRepair(deps, request, options)).outcome;
    case 'park':
      return (await parkRepair(deps, request, options)).outcome;
    case 'move-token':
      return (await moveTokenRepair(deps, request, options)).outcome;
    case 'cancel-token':
      return (await cancelTokenRepair(deps, request, options)).outcome;
    case 'resolve-incident':
      return (await resolveIncidentRepair(deps, request, options)).outcome;
    case 'retire-version':
      return (await retireVersionRepair(deps, request, options)).outcome;
  }
}

/**
 * Runs a repair's store call; a basis that changed since the preview is
 * refused in words with its activities labelled (a RefusedError: nothing was done).
 */
async function heldToPreview<T>(label: (activityId: string) => string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof BasisChangedError) throw new RefusedError(basisChangeText(err, label));
    throw err;
  }
}

const sinkFor = (options: RepairRunOptions): WriteSink => ({ rollback: options.preview, writes: [] });

/** The preview's basis for the store's repair, when the caller has one. */
const expectOf = (options: RepairRunOptions): { expect?: RepairBasis } =>
  options.expect === undefined ? {} : { expect: options.expect };

/**
 * The outcome; after a real commit, first the Cloud Tasks of what the repair
 * created, then the one log line of the applied repair (an audit or a
 * log-based alert reads it). A preview dispatches and logs nothing.
 */
async function settle(
  deps: OperationsDeps,
  request: RepairRequest,
  options: RepairRunOptions,
  requestId: string,
  sink: WriteSink,
  at: Date,
  done: Done,
): Promise<RepairOutcome> {
  let dispatch = { dispatched: 0, timersDispatched: 0 };
  if (!options.preview) {
    logDuplicates(deps.log, done.duplicates);
    dispatch = await dispatchAfterRepair(deps, done, deps.log);
    deps.log.info('operator repair', {
      kind: request.kind,
      target: done.target,
      by: options.actor.id,
      via: options.actor.via,
      requestId,
      preview: false,
      alreadyApplied: done.alreadyApplied,
      writes: sink.writes.length,
    });
  }
  return {
    kind: request.kind,
    preview: options.preview,
    target: done.target,
    summary: done.summary,
    writes: sink.writes.map((w) => ({ path: w.path, op: w.op, fields: [...w.fields] })),
    alreadyApplied: done.alreadyApplied,
    basis: done.basis === null ? null : { subject: done.basis.subject, facts: { ...done.basis.facts } },
    expect: done.basis === null ? null : formatBasis(done.basis),
    jobs: done.jobs.length,
    timers: done.timers.length,
    ...dispatch,
    by: options.actor.id,
    at: at.toISOString(),
  };
}

/** An activity as a person reads it: its BPMN name and id, or the id alone (no name, or the model is not deployed). */
function activityLabel(engine: Engine, processKey: string | null, activityId: string): string {
  if (processKey === null) return activityId;
  try {
    const nodes = engine.model(processKey).nodes;
    const name = Object.hasOwn(nodes, activityId) ? nodes[activityId]?.name : null;
    return name === null || name === undefined || name === '' ? activityId : `${name} (${activityId})`;
  } catch {
    return activityId;
  }
}

/** The process key of a stored instance, for its activities' names; null when there is no such instance. */
async function processKeyOf(deps: OperationsDeps, instanceId: string): Promise<string | null> {
  const key: unknown = (await refs.instance(deps.db(), instanceId).get()).get('processKey');
  return typeof key === 'string' ? key : null;
}

/**
 * PARKED back to OPEN (operations/inbox-repairs.ts), if its payload fits the
 * app's message schema as deployed now (requeue-fit.ts); one that no longer
 * fits stays PARKED as INVALID_PAYLOAD with the validation message. A dead
 * letter whose payload is kept in chunks has it offloaded first, as the
 * receiver would have, and its chunks deleted after the commit; a preview
 * only reads the chunks back (refusing as the real run would) and writes no object.
 */
export async function requeueRepair(
  deps: OperationsDeps,
  request: Req<'requeue'>,
  options: RepairRunOptions,
): Promise<RepairRun<RequeueResult & { readonly unchecked: string | null }>> {
  const { id } = request;
  const db = deps.db();
  const now = deps.now();
  const requestId = options.requestId ?? newRequestId();
  const stored = (await db.collection(INBOX).doc(id).get()).data();
  const fit = await requeueFit(deps, id, stored);
  const misfit = fit.fits === false ? fit.error : null;
  // Checked first, so a document requeue refuses (or parks again) is not offloaded for nothing.
  const chunked = misfit === null && isChunkedPayload(stored) && checkRequeue(id, stored as InboxView).ok;
  let offloaded: OffloadedPayload | null = null;
  if (chunked && options.preview) await chunkedDraft(deps, id, stored ?? {});
  else if (chunked) offloaded = await offloadChunked(deps, deps.log, id, stored ?? {});
  const sink = sinkFor(options);
  const result = await heldToPreview(
    (a) => a,
    () => requeue(db, id, now, requestId, offloaded, { actor: options.actor, sink, ...expectOf(options) }, misfit),
  );
  if (offloaded !== null) await deleteRawChunks(db, id);
  const chunkNote = chunked
    ? options.preview
      ? '; its payload, kept in chunks, is offloaded to the payload bucket first'
      : '; its payload, kept in chunks, offloaded to the payload bucket'
    : '';
  const uncheckedNote = fit.fits === 'unchecked' ? `; ${fit.why}` : '';
  const summary =
    result.misfit === null
      ? `requeue ${id}: PARKED (${result.previousReason ?? 'no reason'}) → OPEN, due now${chunkNote}${uncheckedNote}`
      : `requeue ${id}: PARKED (${result.previousReason ?? 'no reason'}) → PARKED (INVALID_PAYLOAD), its payload no longer fits today's schema: ${result.misfit}`;
  return {
    result: { ...result, unchecked: fit.fits === 'unchecked' ? fit.why : null },
    outcome: await settle(deps, request, options, requestId, sink, now, {
      ...NOTHING_CREATED,
      target: id,
      summary,
      alreadyApplied: result.alreadyApplied,
      basis: result.basis,
    }),
  };
}

/** OPEN to PARKED (MANUAL) with the operator's text (operations/inbox-repairs.ts). */
export async function parkRepair(
  deps: OperationsDeps,
  request: Req<'park'>,
  options: RepairRunOptions,
): Promise<RepairRun<{ alreadyApplied: boolean }>> {
  const now = deps.now();
  const requestId = options.requestId ?? newRequestId();
  const sink = sinkFor(options);
  const result = await heldToPreview(
    (a) => a,
    () =>
      park(deps.db(), request.id, request.text, now, requestId, { actor: options.actor, sink, ...expectOf(options) }),
  );
  const summary = `park ${request.id}: OPEN → PARKED (MANUAL): ${request.text}`;
  return {
    result,
    outcome: await settle(deps, request, options, requestId, sink, now, {
      ...NOTHING_CREATED,
      target: request.id,
      summary,
      alreadyApplied: result.alreadyApplied,
      basis: result.basis,
    }),
  };
}

/** Move a token (or add one) to an activity and run it (engine/store/move-token.ts); refused for an instance that does not exist. */
export async function moveTokenRepair(
  deps: OperationsDeps,
  request: Req<'move-token'>,
  options: RepairRunOptions,
): Promise<RepairRun<Repaired & { executionId: string; fromActivityId: string | null }>> {
  const engine = await deps.engine();
  const processKey = await processKeyOf(deps, request.instanceId);
  if (processKey === null) throw new RefusedError(`no process instance ${request.instanceId}`);
  const now = deps.now();
  const requestId = options.requestId ?? newRequestId();
  const sink = sinkFor(options);
  const result = await heldToPreview(
    (a) => activityLabel(engine, processKey, a),
    () =>
      moveToken(
        deps.db(),
        engine,
        {
          processInstanceId: request.instanceId,
          executionId: request.executionId,
          activityId: request.activityId,
          force: request.force,
          now,
          requestId,
        },
        { actor: options.actor, sink, ...expectOf(options) },
      ),
  );
  const to = activityLabel(engine, processKey, request.activityId);
  const what =
    result.fromActivityId !== null
      ? `move token ${result.executionId} from ${activityLabel(engine, processKey, result.fromActivityId)} to ${to}`
      : request.executionId === null
        ? `add token ${result.executionId} at ${to}`
        : `move token ${result.executionId} to ${to}`;
  const summary = `${what} of instance ${request.instanceId}${request.force ? ' (forced: a second waiting point for a key is allowed, and recorded as an incident)' : ''}`;
  return {
    result,
    outcome: await settle(deps, request, options, requestId, sink, now, {
      ...result,
      target: request.instanceId,
      summary,
    }),
  };
}

/** End a token where it stands (engine/store/cancel-token.ts). */
export async function cancelTokenRepair(
  deps: OperationsDeps,
  request: Req<'cancel-token'>,
  options: RepairRunOptions,
): Promise<RepairRun<Repaired & { activityId: string }>> {
  const engine = await deps.engine();
  const processKey = await processKeyOf(deps, request.instanceId);
  const now = deps.now();
  const requestId = options.requestId ?? newRequestId();
  const sink = sinkFor(options);
  const result = await heldToPreview(
    (a) => activityLabel(engine, processKey, a),
    () =>
      cancelTokenRun(deps.db(), engine, request.instanceId, request.executionId, now, requestId, {
        actor: options.actor,
        sink,
        ...expectOf(options),
      }),
  );
  const summary = `cancel token ${request.executionId} at ${activityLabel(engine, processKey, result.activityId)} of instance ${request.instanceId}`;
  return {
    result,
    outcome: await settle(deps, request, options, requestId, sink, now, {
      ...result,
      target: request.instanceId,
      summary,
    }),
  };
}

/** Close an instance's open incidents once their causes are repaired (engine/store/resolve-incident.ts). */
export async function resolveIncidentRepair(
  deps: OperationsDeps,
  request: Req<'resolve-incident'>,
  options: RepairRunOptions,
): Promise<RepairRun<ResolvedIncidents>> {
  const now = deps.now();
  const requestId = options.requestId ?? newRequestId();
  const sink = sinkFor(options);
  const result = await heldToPreview(
    (a) => a,
    () =>
      resolveIncident(deps.db(), request.instanceId, request.note, now, requestId, {
        actor: options.actor,
        sink,
        ...expectOf(options),
      }),
  );
  const count = `${result.resolved} open incident${result.resolved === 1 ? '' : 's'}`;
  const summary = `resolve ${count} of instance ${request.instanceId}: ${result.instance.status} then${request.note === null ? '' : `; note: ${request.note}`}`;
  return {
    result,
    outcome: await settle(deps, request, options, requestId, sink, now, {
      ...NOTHING_CREATED,
      target: request.instanceId,
      summary,
      alreadyApplied: result.alreadyApplied,
      basis: result.basis,
    }),
  };
}

/** Delete a stored process version nothing uses (operations/retire-version.ts); refused for the deployed one or one in use. */
export async function retireVersionRepair(
  deps: OperationsDeps,
  request: Req<'retire-version'>,
  options: RepairRunOptions,
): Promise<RepairRun<RetiredVersion>> {
  const engine = await deps.engine();
  const now = deps.now();
  const requestId = options.requestId ?? newRequestId();
  const sink = sinkFor(options);
  const result = await heldToPreview(
    (a) => a,
    () => retireVersion(deps.db(), engine, request, { sink, ...expectOf(options) }),
  );
  const summary = `retire version ${request.version} of ${request.processKey}: its stored XML deleted (no live instance, item, job, timer or user task uses it; ${result.completed} completed instance${result.completed === 1 ? '' : 's'} keep their record)`;
  return {
    result,
    outcome: await settle(deps, request, options, requestId, sink, now, {
      ...NOTHING_CREATED,
      target: `${request.processKey}@${request.version}`,
      summary,
      alreadyApplied: false,
      basis: result.basis,
    }),
  };
}
