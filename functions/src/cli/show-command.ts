import type { DocumentData } from '@google-cloud/firestore';
import { writeFile } from 'node:fs/promises';
import { canonicalJson, sha256Hex } from '../core/hash';
import { asCorrelationKey, refs } from '../engine/store/collections';
import { STORED } from '../engine/store/converters';
import { INBOX } from '../inbox/document';
import { type InstanceHold, readInstanceHolds } from '../inbox/instance-hold';
import { offloadedObject } from '../inbox/claim-check';
import { QUERIES } from '../queries';
import {
  type ObjectState,
  readObject,
  shownPayload,
  SHOW_WHOLE_BYTES,
  stateText,
  statObject,
} from '../operations/claims';
import type { CliContext } from './context';
import { view } from '../operations/documents';
import { RefusedError } from '../operations/refused';
import { print } from './output';
import { PREVIEW_ITEMS } from '../operations/claim-view';
import { rawBytes } from '../operations/raw-data';

/** Writes the exact payload bytes to `file`; says what it wrote. */
async function writeRaw(
  ctx: CliContext,
  id: string,
  stored: DocumentData,
  offloaded: { readonly state: ObjectState; readonly data: Buffer | null } | null,
  file: string,
): Promise<{
  readonly file: string;
  readonly bytes: number;
  readonly form: string;
  readonly matchesPayloadHash: boolean | null;
}> {
  let bytes: Buffer;
  let form: string;
  const hasPayload = typeof stored.payload === 'object' && stored.payload !== null;
  // A readable message kept in chunks (a dead letter stored while the bucket was down): its payload field is only
  // the summary, the whole message is in the chunks, and its hash is of the canonical JSON, not of those bytes.
  const chunkedPayload = hasPayload && Number(stored.rawDataChunks ?? 0) > 0;
  if (offloaded !== null) {
    if (offloaded.data === null)
      throw new RefusedError(
        `${id}: the offloaded payload cannot be read (${stateText(offloaded.state)}); nothing written to ${file}`,
      );
    [bytes, form] = [offloaded.data, 'the offloaded object'];
  } else if (hasPayload && !chunkedPayload) {
    [bytes, form] = [Buffer.from(canonicalJson(stored.payload), 'utf8'), 'the canonical JSON of the payload'];
  } else {
    const raw = await rawBytes(ctx.db(), id, stored);
    if (raw === null) throw new RefusedError(`${id} has no payload and no raw bytes; nothing written to ${file}`);
    [bytes, form] = [
      raw,
      chunkedPayload
        ? 'the message as received (kept in rawChunks; the document holds its summary)'
        : 'the raw bytes as received',
    ];
  }
  await writeFile(file, bytes);
  const hash = typeof stored.payloadHash === 'string' && !chunkedPayload ? stored.payloadHash : null;
  return { file, bytes: bytes.length, form, matchesPayloadHash: hash === null ? null : sha256Hex(bytes) === hash };
}

/** What the payload sweep does with a document past payloadExpireAt, and what keeps it (inbox/instance-hold.ts). */
function sweptWith(stored: DocumentData, hold: InstanceHold | undefined): string {
  const what =
    offloadedObject(stored.offloaded) === null
      ? 'the payload sweep deletes its rawChunks with the document'
      : 'the payload sweep deletes the object, then the document';
  return hold === undefined
    ? what
    : `${what}; not while instance ${hold.processInstanceId} is ${hold.instanceStatus}: a step of it may still read the object`;
}

/**
 * `inbox show ID [--raw FILE]`: a document with its payload, attempts,
 * errors, claims and process state. An offloaded payload is fetched from
 * the payload bucket, pinned to its generation, and shown (a large one as a
 * preview: the first PREVIEW_ITEMS items of each list); a sender's
 * reference is stat'ed (FOUND, MISSING or CHANGED), never fetched. `--raw`
 * writes the exact bytes of the payload to a file: the canonical JSON of an
 * inline one (whose SHA-256 is the document's payloadHash), the object's
 * bytes of an offloaded one, the raw bytes of an unreadable message (inline
 * or from its rawChunks).
 */
export async function showCommand(ctx: CliContext, id: string, options: { readonly raw?: string } = {}): Promise<void> {
  const db = ctx.db();
  const snap = await db.collection(INBOX).doc(id).get();
  if (!snap.exists) throw new RefusedError(`no inbox document ${id}: check the id (\`inbox list\` shows them)`);
  const stored = snap.data() ?? {};
  const doc = view(snap);
  const chunks =
    Number(doc.rawDataChunks ?? 0) > 0 ? (await QUERIES.rawChunksOf.build(db, id).count().get()).data().count : 0;
  const key =
    typeof doc.correlationKey === 'string'
      ? asCorrelationKey(
          (await refs.correlationKey(db, doc.correlationKey).withConverter(STORED).get()).data(),
          doc.correlationKey,
        )
      : null;
  const instanceIds = new Set<string>([
    ...(key?.waiting.map((w) => w.processInstanceId) ?? []),
    ...(typeof doc.processInstanceId === 'string' ? [doc.processInstanceId] : []),
  ]);
  const instances = await Promise.all([...instanceIds].map(async (i) => view(await refs.instance(db, i).get())));
  const hold = (await readInstanceHolds(db, [{ id, data: stored }])).get(id);
  const rawData = doc.rawData instanceof Uint8Array ? Buffer.from(doc.rawData).toString('base64') : null;

  const offloadedRef = offloadedObject(stored.offloaded);
  const referenceRef = offloadedObject(stored.reference);
  const offloaded = offloadedRef === null ? null : await readObject(ctx.runtime.payloadStore, offloadedRef);
  const reference = referenceRef === null ? null : await statObject(ctx.runtime.payloadStore, referenceRef);
  const whole: unknown = offloaded !== null && offloaded.data !== null ? shownPayload(offloaded.data) : null;
  const raw = options.raw === undefined ? null : await writeRaw(ctx, id, stored, offloaded, options.raw);
  const claims = {
    reference:
      referenceRef === null || reference === null
        ? null
        : { uri: String((stored.reference as DocumentData).uri), ...reference },
    offloaded:
      offloadedRef === null || offloaded === null
        ? null
        : {
            uri: String((stored.offloaded as DocumentData).uri),
            ...offloaded.state,
            payload: whole,
            preview: offloaded.data !== null && offloaded.data.length > SHOW_WHOLE_BYTES,
          },
  };
  const result = {
    document: { ...doc, rawData },
    claims,
    raw,
    rawChunksStored: chunks,
    keptForInstance: hold ?? null,
    waitingPoints: key?.waiting ?? [],
    lane: key?.open ?? [],
    processInstances: instances,
  };
  if (ctx.json) {
    ctx.io.out(JSON.stringify(result, null, 2));
    return;
  }
  const offloadedRows: unknown[][] =
    claims.offloaded === null
      ? []
      : [
          ['offloaded payload', `${claims.offloaded.uri}: ${stateText(offloaded?.state ?? { state: 'MISSING' })}`],
          ...(whole === null
            ? []
            : [
                [
                  claims.offloaded.preview
                    ? `payload (offloaded, first ${PREVIEW_ITEMS} items of each list; --raw FILE writes all of it)`
                    : 'payload (offloaded)',
                  whole,
                ],
              ]),
        ];
  print(
    ctx,
    result,
    ['field', 'value'],
    [
      ['id', id],
      ['status', doc.status],
      ['reason', doc.reason],
      ['message', doc.messageName],
      ['correlation key', doc.correlationKey],
      ['attempts', doc.attempts],
      ['received', doc.receivedAt],
      ['next attempt', doc.nextAttemptAt],
      ['last error', doc.lastError ?? doc.validationError],
      [
        offloadedRef === null ? 'payload' : 'payload (summary kept on the document)',
        doc.payload ??
          (rawData === null
            ? `(${String(doc.rawDataBytes)} bytes in ${chunks} chunks)`
            : `(raw, base64) ${rawData.slice(0, 200)}`),
      ],
      ...offloadedRows,
      ...(claims.reference === null
        ? []
        : [['reference', `${claims.reference.uri}: ${stateText(reference ?? { state: 'MISSING' })}`]]),
      ...(doc.payloadExpireAt instanceof Date
        ? [['payload expires', `${doc.payloadExpireAt.toISOString()} (${sweptWith(stored, hold)})`]]
        : []),
      ['park details', doc.parkDetails],
      ['dead letter', doc.deadLetter],
      ...instances.map((i) => [
        `instance ${i.id}`,
        `${String(i.status)}; incidents: ${JSON.stringify(i.incidents ?? [])}`,
      ]),
      ...(key?.waiting ?? []).map((w) => [
        `waiting ${w.executionId}`,
        `${w.messageName} at ${w.activityId} (instance ${w.processInstanceId})`,
      ]),
    ],
  );
  if (raw !== null)
    ctx.io.out(
      `wrote ${raw.bytes} bytes (${raw.form}) to ${raw.file}${raw.matchesPayloadHash === null ? '' : raw.matchesPayloadHash ? '; SHA-256 matches payloadHash' : '; SHA-256 does NOT match payloadHash'}`,
    );
}
