import { type Doc } from '../operations/documents';

/** A document as the CLI shows it (operations/documents.ts): Timestamps as Dates, with its id. */
export { type Doc, view } from '../operations/documents';

export const ageOf = (doc: Doc, now: Date): string => (doc.receivedAt instanceof Date ? `${Math.round((now.getTime() - doc.receivedAt.getTime()) / 60_000)} min` : '');
