import type { DocumentSnapshot } from '@google-cloud/firestore';
import { datesIn } from '../engine/store/converters';

/** A document as the CLI shows it: Timestamps as Dates, with its id. */
export type Doc = Record<string, unknown> & { id: string };

export const view = (snap: DocumentSnapshot): Doc => ({ ...datesIn(snap.data() ?? {}), id: snap.id });

export const ageOf = (doc: Doc, now: Date): string => (doc.receivedAt instanceof Date ? `${Math.round((now.getTime() - doc.receivedAt.getTime()) / 60_000)} min` : '');
