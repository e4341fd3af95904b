import { DEFAULT_RECORD_RETENTION_MS } from '../config';
import type { MessageBuffer } from '../engine/engine';
import { asCorrelationKey, refs, saveCorrelationKey } from '../engine/store/collections';
import { messageVariables } from '../inbox/claim-check';
import { oldestOf, withoutEntry } from './lane';
import { inboxRef, type InboxView, writeDecision } from './inbox-writes';

/**
 * The inbox as the engine's message buffer: when a token starts waiting, the
 * oldest OPEN inbox document of its key is consumed in the same transaction,
 * if it is the message the token waits for. Only the oldest: consuming a
 * younger one would break per-key order.
 */
export function inboxBuffer(
  retentionMs: number,
  recordRetentionMs: number = DEFAULT_RECORD_RETENTION_MS,
): MessageBuffer {
  return {
    async take(uow, point, now) {
      const keyRef = refs.correlationKey(uow.db, point.correlationKey);
      let key = asCorrelationKey(await uow.get(keyRef), point.correlationKey);
      for (;;) {
        const oldest = oldestOf(key.open);
        if (oldest === null || oldest.messageName !== point.messageName) return null;
        const data = await uow.get(inboxRef(uow, oldest.inboxId));
        const doc = data as InboxView | undefined;
        if (doc === undefined || doc.status !== 'OPEN') {
          // A stale lane entry (finished elsewhere): drop it and look again.
          key = { ...key, open: withoutEntry(key.open, oldest.inboxId) };
          saveCorrelationKey(uow, key, now);
          continue;
        }
        saveCorrelationKey(uow, { ...key, open: withoutEntry(key.open, oldest.inboxId) }, now);
        writeDecision(
          uow,
          oldest.inboxId,
          doc,
          { kind: 'DONE', processInstanceId: point.processInstanceId },
          now,
          { doneMs: retentionMs, recordMs: recordRetentionMs },
          'BUFFER',
        );
        // No stat of a sender's reference here (no I/O inside a transaction): the step that reads it pinned fails as an incident if it is gone.
        return { inboxId: oldest.inboxId, variables: messageVariables(doc) };
      }
    },
  };
}
