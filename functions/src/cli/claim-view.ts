/** Moved to operations/; kept here for the CLI's importers. */
export * from '../operations/claim-view';
