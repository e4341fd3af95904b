/** Moved to operations/ (one implementation for the CLI and the console); kept here for the CLI's importers. */
export * from '../operations/explain';
