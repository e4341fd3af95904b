/** The statuses and park reasons of inbox documents, in the order the CLI and the console list them. */
export const STATUSES = ['OPEN', 'DONE', 'PARKED'] as const;
export const REASONS = [
  'INVALID_PAYLOAD',
  'KEY_COLLISION',
  'NO_WAITING_INSTANCE',
  'AMBIGUOUS_CORRELATION',
  'ALREADY_STARTED',
  'START_REFUSED',
  'REFERENCE_UNAVAILABLE',
  'TOKEN_LIMIT',
  'STEP_FAILED',
  'DEAD_LETTERED',
  'MANUAL',
] as const;
