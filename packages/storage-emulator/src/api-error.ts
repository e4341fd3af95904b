/**
 * Errors in the JSON API's own shape,
 * `{"error":{"code","message","errors":[{"message","domain","reason"}]}}`:
 * the client builds its ApiError from that body (code, message, errors), so
 * code that reads `err.code` or a reason sees what Cloud Storage would send.
 */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }

  body(): {
    error: { code: number; message: string; errors: Array<{ message: string; domain: string; reason: string }> };
  } {
    return {
      error: {
        code: this.status,
        message: this.message,
        errors: [{ message: this.message, domain: 'global', reason: this.reason }],
      },
    };
  }
}

/** The failures the emulator answers, worded as the real API words them. */
export const fail = {
  noObject: (bucket: string, object: string): ApiFailure =>
    new ApiFailure(404, 'notFound', `No such object: ${bucket}/${object}`),
  noBucket: (): ApiFailure => new ApiFailure(404, 'notFound', 'The specified bucket does not exist.'),
  bucketExists: (): ApiFailure =>
    new ApiFailure(
      409,
      'conflict',
      'Your previous request to create the named bucket succeeded and you already own it.',
    ),
  precondition: (): ApiFailure =>
    new ApiFailure(412, 'conditionNotMet', 'At least one of the pre-conditions you specified did not hold.'),
  invalid: (message: string): ApiFailure => new ApiFailure(400, 'invalid', message),
  required: (message: string): ApiFailure => new ApiFailure(400, 'required', message),
  notFoundPath: (method: string, path: string): ApiFailure =>
    new ApiFailure(404, 'notFound', `Not Found: ${method} ${path}`),
  /** Something the real API does that this emulator does not (README, "What it does not"). */
  notImplemented: (what: string): ApiFailure =>
    new ApiFailure(501, 'notImplemented', `${what} is not implemented by @inbox/storage-emulator`),
  /** An injected fault (faults.ts), worded as the real API's answer for that status. */
  injected: (status: number): ApiFailure =>
    new ApiFailure(
      status,
      INJECTED_REASONS.get(status) ?? 'injectedFault',
      INJECTED_MESSAGES.get(status) ?? `Injected fault: HTTP ${status}`,
    ),
};

const INJECTED_REASONS = new Map([
  [429, 'rateLimitExceeded'],
  [500, 'backendError'],
  [503, 'backendError'],
  [403, 'forbidden'],
]);
const INJECTED_MESSAGES = new Map([
  [
    429,
    'The rate of change requests to the object exceeds the rate limit. Please reduce the rate of create, update, and delete requests.',
  ],
  [500, 'We encountered an internal error. Please try again.'],
  [503, 'We encountered an internal error. Please try again.'],
  [
    403,
    'The caller does not have storage.objects.create access to the Google Cloud Storage object. Permission denied.',
  ],
]);
