/**
 * What the storage emulator holds of a run: the object each claim of its
 * inbox documents names (read at the claim's generation, through the real
 * client), and the offloaded payloads in the inbox's bucket that belong to
 * its documents.
 */
import type { Storage } from '@google-cloud/storage';
import { sha256Hex } from '../../../functions/src/core/hash';
import { OFFLOAD_PREFIX } from '../../../functions/src/inbox/claim-check';
import type { ClaimDoc, ClaimView, ObjectView } from './large-reports';

const notFound = (err: unknown): boolean =>
  typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 404;

/**
 * The object of every claim of `docs`, by uri: a reference is stat'ed
 * (its size), an offloaded payload downloaded (its size and SHA-256).
 * `cache` keeps objects found before: an object at a generation never
 * changes, so polling need not download megabytes twice a second. (It can
 * be deleted, by the sweep or by hand: the final snapshot reads without it.)
 */
export async function readClaimObjects(
  storage: Storage,
  docs: readonly ClaimDoc[],
  cache: Map<string, ObjectView> | null,
): Promise<Record<string, ObjectView>> {
  const claims: Array<{ claim: ClaimView; download: boolean }> = docs.flatMap((d) => [
    ...(d.reference === null ? [] : [{ claim: d.reference, download: false }]),
    ...(d.offloaded === null ? [] : [{ claim: d.offloaded, download: true }]),
  ]);
  const read = async ({ claim, download }: { claim: ClaimView; download: boolean }): Promise<[string, ObjectView]> => {
    const cached = cache?.get(claim.uri);
    if (cached !== undefined) return [claim.uri, cached];
    const file = storage.bucket(claim.bucket).file(claim.object, { generation: claim.generation });
    let view: ObjectView;
    try {
      if (download) {
        const [data] = await file.download();
        view = { exists: true, bytes: data.length, sha256: sha256Hex(data) };
      } else {
        const [meta] = await file.getMetadata();
        view = { exists: true, bytes: Number(meta.size ?? 0), sha256: null };
      }
      cache?.set(claim.uri, view);
    } catch (err) {
      if (!notFound(err)) throw err;
      view = { exists: false, bytes: null, sha256: null };
    }
    return [claim.uri, view];
  };
  return Object.fromEntries(await Promise.all(claims.map(read)));
}

/**
 * Offloaded payloads in `bucket` whose inbox id (`payloads/<id>/<hash>.json`)
 * is one of `ids`: this run's. An object of an id the run does not know
 * (an earlier run's) is not this run's to account for.
 */
export async function readPayloadObjects(
  storage: Storage,
  bucket: string,
  ids: ReadonlySet<string>,
): Promise<Array<{ inboxId: string; name: string }>> {
  const [files] = await storage.bucket(bucket).getFiles({ prefix: OFFLOAD_PREFIX });
  return files.flatMap((f) => {
    const inboxId = f.name.slice(OFFLOAD_PREFIX.length).split('/')[0] ?? '';
    return ids.has(inboxId) ? [{ inboxId, name: f.name }] : [];
  });
}
