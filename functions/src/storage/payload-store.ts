import type { GsObject } from '../core/gs-uri';

/**
 * The one Cloud Storage adapter's interface: what the receiver, the relay,
 * the jobs, the payload sweep and the CLI do with objects. Production uses
 * `@google-cloud/storage` (gcs-payload-store.ts); locally the same client
 * talks to packages/storage-emulator through STORAGE_EMULATOR_HOST.
 *
 * Every method throws only for technical failures (an outage, a timeout,
 * 429/5xx, a permission the deployment failed to grant): callers retry
 * those. What a sender must fix is an answer, never an exception.
 */
export interface PayloadStore {
  /**
   * Creates `bucket/object` with `data` unless an object of that name exists
   * (`ifGenerationMatch=0`). `created: false` when it existed: `generation`
   * is then the existing object's, for the caller to use (its name is
   * deterministic, so it holds the same bytes; one that holds other bytes,
   * by size or MD5, is a thrown failure, never pointed at).
   */
  createIfAbsent(
    bucket: string,
    object: string,
    data: Buffer,
    contentType: string,
  ): Promise<{ readonly generation: string; readonly created: boolean }>;
  /** The object's bytes at exactly that generation. */
  read(ref: GsObject): Promise<ReadResult>;
  /** Whether the generation exists, without its bytes. */
  stat(ref: GsObject): Promise<StatResult>;
  /** Deletes that generation; ABSENT when it is gone already (a retried delete). */
  delete(ref: GsObject): Promise<'DELETED' | 'ABSENT'>;
  /** One page of the live objects under `prefix`, in name order. */
  list(bucket: string, prefix: string, pageToken: string | null, pageSize: number): Promise<ObjectPage>;
}

/** Why a generation could not be read: a business answer (the sender must fix it), not an outage. */
export type Unavailable =
  /** No object of that name exists any more. */
  | { readonly kind: 'MISSING' }
  /** The name holds another generation now: the content was replaced after the reference was made. */
  | { readonly kind: 'CHANGED'; readonly liveGeneration: string };

export type ReadResult = { readonly kind: 'FOUND'; readonly data: Buffer } | Unavailable;
export type StatResult = { readonly kind: 'FOUND'; readonly bytes: number } | Unavailable;

/** One live object of a listing. */
export interface ListedObject {
  readonly object: string;
  readonly generation: string;
  readonly bytes: number;
  /** When this generation was written (the resource's `timeCreated`): how old it is. */
  readonly created: Date;
}

export interface ObjectPage {
  readonly objects: readonly ListedObject[];
  readonly nextPageToken: string | null;
}
