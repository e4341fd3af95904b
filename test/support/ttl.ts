import type { Firestore } from '@google-cloud/firestore';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The TTL policies as deployed: every field override of firestore.indexes.json with "ttl": true. */
export const TTL_POLICIES = (
  JSON.parse(readFileSync(join(__dirname, '..', '..', 'firestore.indexes.json'), 'utf8')) as {
    fieldOverrides: Array<{ collectionGroup: string; fieldPath: string; ttl?: boolean }>;
  }
).fieldOverrides.filter((o) => o.ttl === true);

/**
 * What Firestore's TTL deletion does by `now` (the emulator runs none): every
 * document of a collection group with a TTL policy whose TTL field is at or
 * before `now` is deleted. Read from firestore.indexes.json, so a policy
 * missing there is missing here too. Returns how many documents went, per policy.
 */
export async function expireAsTtlWould(db: Firestore, now: Date): Promise<Record<string, number>> {
  const deleted: Record<string, number> = {};
  for (const policy of TTL_POLICIES) {
    const expired = await db.collectionGroup(policy.collectionGroup).where(policy.fieldPath, '<=', now).get();
    await Promise.all(expired.docs.map((d) => d.ref.delete()));
    deleted[`${policy.collectionGroup}.${policy.fieldPath}`] = expired.size;
  }
  return deleted;
}
