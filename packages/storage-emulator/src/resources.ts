import type { StoredBucket, StoredObject } from './store';

/**
 * The JSON API's resources for what the store holds (the fields the client
 * and our code read, plus the usual read-only ones). Numbers that are int64
 * in the API (generation, size) are decimal strings, as there.
 */
export function objectResource(base: string, o: StoredObject): Record<string, unknown> {
  const path = `b/${encodeURIComponent(o.bucket)}/o/${encodeURIComponent(o.name)}`;
  const time = o.created.toISOString();
  return {
    kind: 'storage#object',
    id: `${o.bucket}/${o.name}/${o.generation}`,
    selfLink: `${base}/storage/v1/${path}`,
    mediaLink: `${base}/download/storage/v1/${path}?generation=${o.generation}&alt=media`,
    name: o.name,
    bucket: o.bucket,
    generation: String(o.generation),
    metageneration: '1',
    contentType: o.contentType,
    storageClass: 'STANDARD',
    size: String(o.data.length),
    md5Hash: o.hashes.md5Hash,
    crc32c: o.hashes.crc32c,
    etag: etagOf(o.generation),
    timeCreated: time,
    updated: time,
    timeStorageClassUpdated: time,
    ...(o.custom === undefined ? {} : { metadata: o.custom }),
  };
}

export function bucketResource(base: string, b: StoredBucket): Record<string, unknown> {
  const time = b.created.toISOString();
  return {
    kind: 'storage#bucket',
    selfLink: `${base}/storage/v1/b/${encodeURIComponent(b.name)}`,
    id: b.name,
    name: b.name,
    projectNumber: '0',
    metageneration: '1',
    location: 'US',
    locationType: 'multi-region',
    storageClass: 'STANDARD',
    etag: 'CAE=',
    timeCreated: time,
    updated: time,
    iamConfiguration: { uniformBucketLevelAccess: { enabled: true }, publicAccessPrevention: 'enforced' },
  };
}

/** The headers of a media download (`alt=media`): the client validates the body against `x-goog-hash`. */
export function mediaHeaders(o: StoredObject): Record<string, string> {
  return {
    'content-type': o.contentType,
    'content-length': String(o.data.length),
    // crc32c first, md5 second, as Cloud Storage sends them.
    'x-goog-hash': `crc32c=${o.hashes.crc32c},md5=${o.hashes.md5Hash}`,
    'x-goog-generation': String(o.generation),
    'x-goog-metageneration': '1',
    // The client validates only bodies it knows were stored as sent ("identity") or gzip it receives gzipped.
    'x-goog-stored-content-encoding': 'identity',
    'x-goog-stored-content-length': String(o.data.length),
    'x-goog-storage-class': 'STANDARD',
    etag: etagOf(o.generation),
    'cache-control': 'private, max-age=0',
  };
}

function etagOf(generation: bigint): string {
  // Cloud Storage's etag for metageneration 1 is a base64 varint of generation and metageneration; any stable value serves.
  return Buffer.from(`${generation}:1`).toString('base64');
}
