/**
 * The document repairs the CLI commands use, kept where they were imported
 * from: the implementation is in operations/ (one for the CLI and the console).
 */
export { RefusedError } from '../operations/refused';
export { checkRequeue, park, requeue, type RequeueCheck } from '../operations/inbox-repairs';
