import {
  bucketNameProblem,
  gsUri,
  MAX_GS_URI_CHARS,
  objectNameProblem,
  parseGsUri,
} from '../../functions/src/core/gs-uri';

describe('parseGsUri', () => {
  test.each([
    [
      'gs://provider-reports/cases/C-1/report.json#1733050000000001',
      { bucket: 'provider-reports', object: 'cases/C-1/report.json', generation: '1733050000000001' },
    ],
    ['gs://a.b.c/x#1', { bucket: 'a.b.c', object: 'x', generation: '1' }],
    // A '#' inside the object name is allowed: the generation is after the last one.
    ['gs://bkt/weird#name#42', { bucket: 'bkt', object: 'weird#name', generation: '42' }],
    [
      'gs://bkt/with space/ü.json#9223372036854775807',
      { bucket: 'bkt', object: 'with space/ü.json', generation: '9223372036854775807' },
    ],
  ])('reads %s', (text, value) => {
    expect(parseGsUri(text)).toEqual({ ok: true, value });
    expect(gsUri(value)).toBe(text);
  });

  test.each([
    ['', /gs:\/\/bucket\/object#generation/],
    ['https://storage.googleapis.com/b/o', /gs:\/\/bucket\/object#generation/],
    ['gs://bucket-only', /names a bucket and an object/],
    ['gs:///object#1', /names a bucket and an object/],
    ['gs://bkt/object', /pins the object generation/],
    ['gs://bkt#1/object', /pins the object generation/],
    ['gs://bkt/object#', /positive decimal integer/],
    ['gs://bkt/object#0', /positive decimal integer/],
    ['gs://bkt/object#-1', /positive decimal integer/],
    ['gs://bkt/object#1e5', /positive decimal integer/],
    ['gs://bkt/object#12345678901234567890', /positive decimal integer/],
    ['gs://Upper/object#1', /lowercase/],
    ['gs://ab/object#1', /3 to 222/],
    ['gs://bkt/#1', /1 to 1024 bytes/],
    ['gs://bkt/..#1', /not "\." or "\.\."/],
    ['gs://bkt/a\nb#1', /carriage return or line feed/],
    ['gs://googlebucket/o#1', /goog/],
    ['gs://192.168.1.1/o#1', /IP address/],
    [`gs://bkt/${'x'.repeat(MAX_GS_URI_CHARS)}#1`, /at most 1280 characters/],
  ])('refuses %j with a reason', (text, reason) => {
    const parsed = parseGsUri(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toMatch(reason);
  });
});

describe('name rules', () => {
  test('a bucket of 63 characters without dots passes, 64 does not; dotted names may be longer', () => {
    expect(bucketNameProblem('a'.repeat(63))).toBeNull();
    expect(bucketNameProblem('a'.repeat(64))).toMatch(/at most 63/);
    expect(bucketNameProblem(`${'a'.repeat(63)}.${'b'.repeat(63)}`)).toBeNull();
    expect(bucketNameProblem(`${'a'.repeat(64)}.b`)).toMatch(/1 to 63 characters/);
  });
  test('an object name is counted in UTF-8 bytes', () => {
    expect(objectNameProblem('é'.repeat(512))).toBeNull();
    expect(objectNameProblem('é'.repeat(513))).toMatch(/1024 bytes/);
  });
});
