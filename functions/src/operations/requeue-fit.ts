import type { DocumentData } from '@google-cloud/firestore';
import { offloadedObject } from '../inbox/claim-check';
import { schemaFit, type SchemaFit } from '../receiver/schema-fit';
import { isChunkedPayload } from './offload-chunked';
import { rawBytes } from './raw-data';
import type { OperationsDeps } from './types';

/**
 * Whether a PARKED document's payload fits the app's message types as
 * deployed now (receiver/schema-fit.ts): the payload a requeue would hand
 * the process. The stored payload, or the whole of it where the document
 * keeps only its summary: read back from its offloaded object, or from its
 * chunks (a dead letter kept in Firestore). `unchecked`: that object could
 * not be read (MISSING, CHANGED), so the requeue goes on without the check
 * and the relay answers for the object as it always does.
 */
export type RequeueFit = SchemaFit | { readonly fits: 'unchecked'; readonly why: string };

const parsed = (bytes: Buffer): unknown => {
  try {
    return JSON.parse(bytes.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
};

/** Reads only: a preview and the real run check alike. A document with nothing to check (unreadable, no message name) fits: checkRequeue refuses it. */
export async function requeueFit(
  deps: Pick<OperationsDeps, 'db' | 'registry' | 'payloadStore'>,
  id: string,
  doc: DocumentData | undefined,
): Promise<RequeueFit> {
  if (doc === undefined || typeof doc.messageName !== 'string' || doc.payload === null || doc.payload === undefined)
    return { fits: true };
  const registry = deps.registry();
  if (isChunkedPayload(doc)) {
    const bytes = await rawBytes(deps.db(), id, doc);
    // No chunks: the offload refuses it, as before.
    return bytes === null ? { fits: true } : schemaFit(registry, doc.messageName, parsed(bytes));
  }
  const object = offloadedObject(doc.offloaded);
  if (object !== null) {
    const read = await deps.payloadStore().read(object);
    if (read.kind !== 'FOUND')
      return { fits: 'unchecked', why: `its offloaded payload is ${read.kind}: not checked against today's schema` };
    return schemaFit(registry, doc.messageName, parsed(read.data));
  }
  return schemaFit(registry, doc.messageName, doc.payload);
}
