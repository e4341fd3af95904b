import { INBOX_QUERIES } from './queries-inbox';
import { INSTANCE_QUERIES } from './queries-instances';
import { WAIT_QUERIES } from './queries-waits';

export type { PageCursor, QueryShape } from './queries-shape';
export { LIST_FILTER_FIELDS, type ListFilters } from './queries-inbox';
export type { UserTaskFilter } from './queries-waits';

/**
 * Every Firestore query the project issues, in one registry, each with the
 * shape the index check reads (test/indexes): the emulator runs any query
 * without an index, production refuses one that no index serves.
 * Transactions never query (they read by id); these run outside them.
 * The queries live in a module per what they read (queries-inbox.ts,
 * queries-instances.ts, queries-waits.ts), built from queries-shape.ts;
 * code reads them here, where test/unit/index-coverage.test.ts checks each.
 */
export const QUERIES = { ...INBOX_QUERIES, ...INSTANCE_QUERIES, ...WAIT_QUERIES } as const;

export type QueryName = keyof typeof QUERIES;
