import type { DocumentData } from '@google-cloud/firestore';
import type { OffloadedPayload } from '../inbox/claim-check';
import { createLogger } from '../log';
import { offloadChunked as offload } from '../operations/offload-chunked';
import type { CliContext } from './context';

/** operations' offloadChunked for a CLI command: its log lines on stderr. */
export async function offloadChunked(ctx: CliContext, id: string, doc: DocumentData): Promise<OffloadedPayload> {
  return offload(
    { db: ctx.db, config: ctx.config, payloadStore: ctx.runtime.payloadStore, registry: ctx.runtime.registry },
    createLogger((line) => ctx.io.err(line)),
    id,
    doc,
  );
}
