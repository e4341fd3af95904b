import { classifyCliError, EXIT, splitHostPort } from '../../functions/src/cli/failures';

/** The classification of errors the stand-in tests do not stage (test/cli/failures.test.ts runs the real ones). */
const target = { projectId: 'p', emulatorHost: null };
const grpc = (code: number, message: string): Error => Object.assign(new Error(`${code} X: ${message}`), { code });

describe('classifyCliError', () => {
  test.each([
    [
      'UNAUTHENTICATED',
      grpc(16, 'Request had invalid authentication credentials.'),
      EXIT.NO_CREDENTIALS,
      'gcloud auth application-default login',
    ],
    [
      'a token refresh that failed (grpc-js wraps it as UNAVAILABLE)',
      grpc(14, 'Getting metadata from plugin failed with error: invalid_grant'),
      EXIT.NO_CREDENTIALS,
      'refused the credentials',
    ],
    [
      'a project that does not exist',
      grpc(7, 'Permission denied on resource project nope.'),
      EXIT.WRONG_PROJECT,
      'check GOOGLE_CLOUD_PROJECT',
    ],
    ['Firestore down, against a project', grpc(14, 'No connection established'), EXIT.UNREACHABLE, 'check the network'],
    ['a deadline, against a project', grpc(4, 'Deadline exceeded'), EXIT.UNREACHABLE, 'check the network'],
    [
      'an index not built yet',
      grpc(9, 'The query requires an index. You can create it here: https://console.firebase.google.com/x'),
      EXIT.FAILED,
      'deploy firestore.indexes.json',
    ],
  ])('%s', (_name, err, exitCode, says) => {
    const failure = classifyCliError(err, target, {});
    expect(failure?.exitCode).toBe(exitCode);
    expect(failure?.message).toContain(says);
  });

  test('the emulator going away mid-command says to start it again', () => {
    expect(
      classifyCliError(grpc(14, 'No connection established'), { projectId: 'p', emulatorHost: '127.0.0.1:8080' }, {})
        ?.message,
    ).toContain('the Firestore emulator at 127.0.0.1:8080 (FIRESTORE_EMULATOR_HOST) stopped answering');
  });

  test('anything else is not an expected failure (the CLI reports it as failed, exit 1)', () => {
    expect(classifyCliError(grpc(3, 'Document too large'), target, {})).toBeNull();
    // FAILED_PRECONDITION is a missing index only when it says so (a transaction's precondition is something else).
    expect(
      classifyCliError(grpc(9, 'the stored version does not match the required base version'), target, {}),
    ).toBeNull();
    expect(classifyCliError(new Error('a bug'), target, {})).toBeNull();
  });

  test.each([
    ['127.0.0.1:8080', { host: '127.0.0.1', port: 8080 }],
    ['localhost:1', { host: 'localhost', port: 1 }],
    ['[::1]:8080', { host: '::1', port: 8080 }],
    ['localhost', null],
    ['h:0', null],
    ['h:70000', null],
  ])('splitHostPort(%s)', (value, expected) => {
    expect(splitHostPort(value)).toEqual(expected);
  });
});
