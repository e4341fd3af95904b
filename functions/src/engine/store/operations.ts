/**
 * Each store operation has its own file (start-instance.ts, complete-job.ts,
 * record-job-failure.ts, move-token.ts, cancel-token.ts); import from there.
 * This re-export remains only for the two HTTP handlers that still import it
 * (jobs/run-job.ts, process/start-process.ts); delete it once they import the
 * operations' own files.
 */
export { completeJobRun } from './complete-job';
export { type JobFailure, recordJobFailure } from './record-job-failure';
export { startProcessInstance } from './start-instance';
