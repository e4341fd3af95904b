import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import request from 'supertest';
import { z } from 'zod';
import { classifyFailure, DeadlineExceededError, PermanentFailureError } from '../../functions/src/core/errors';
import { createServer } from 'node:http';
import { type Answer, failureAnswer, send, writeAnswer } from '../../functions/src/http/answer';
import { parseBody, refuseMethod } from '../../functions/src/http/request';

/**
 * The one way every function answers: each kind of {@link Answer} through
 * `send` under the real Functions Framework (status, headers, JSON body), the
 * thrown-error mapping, and the shared opening (method check, body parse).
 */
let registered = 0;
function serveAnswer(answer: Answer): ReturnType<typeof getTestServer> {
  const name = `sendUnderTest${++registered}`;
  http(name, async (_req, res) => send(res, answer));
  return getTestServer(name);
}

describe('send: every kind of answer', () => {
  test.each<[string, Answer, number, Record<string, string | undefined>, unknown]>([
    [
      'ok',
      { kind: 'ok', body: { outcome: 'stored', id: 'x' } },
      200,
      { allow: undefined, 'retry-after': undefined },
      { outcome: 'stored', id: 'x' },
    ],
    [
      'created',
      { kind: 'created', body: { processInstanceId: 'p', created: true } },
      201,
      { 'retry-after': undefined },
      { processInstanceId: 'p', created: true },
    ],
    [
      'reject 400',
      { kind: 'reject', status: 400, error: 'jobId: bad' },
      400,
      { allow: undefined, 'retry-after': undefined },
      { error: 'jobId: bad' },
    ],
    [
      'reject 401',
      { kind: 'reject', status: 401, error: 'no token' },
      401,
      { allow: undefined },
      { error: 'no token' },
    ],
    ['reject 403', { kind: 'reject', status: 403, error: 'not allowed' }, 403, {}, { error: 'not allowed' }],
    ['reject 413', { kind: 'reject', status: 413, error: 'too big' }, 413, {}, { error: 'too big' }],
    ['reject 415', { kind: 'reject', status: 415, error: 'not JSON' }, 415, {}, { error: 'not JSON' }],
    [
      'reject 405 names the allowed methods',
      { kind: 'reject', status: 405, error: 'use POST', allow: ['POST'] },
      405,
      { allow: 'POST', 'retry-after': undefined },
      { error: 'use POST' },
    ],
    [
      'retry with Retry-After',
      { kind: 'retry', code: 'UNAVAILABLE', error: 'try later', retryAfterSeconds: 10 },
      503,
      { 'retry-after': '10' },
      { error: 'try later', code: 'UNAVAILABLE', retry: true },
    ],
    [
      'retry leaving the schedule to the caller',
      { kind: 'retry', code: 'ABORTED', error: 'try later', retryAfterSeconds: null },
      503,
      { 'retry-after': undefined },
      { error: 'try later', code: 'ABORTED', retry: true },
    ],
    [
      'fail: the unexpected',
      { kind: 'fail', code: 'GRPC_3', error: 'unable to' },
      500,
      { 'retry-after': undefined },
      { error: 'unable to', code: 'GRPC_3', retry: false },
    ],
    [
      'bad gateway: a proxy got no answer',
      { kind: 'bad-gateway', error: 'the console did not answer' },
      502,
      { 'retry-after': undefined },
      { error: 'the console did not answer', retry: true },
    ],
  ])('%s → %d', async (_name, answer, status, headers, body) => {
    const res = await request(serveAnswer(answer)).post('/').send({});
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toContain('application/json');
    for (const [header, value] of Object.entries(headers)) expect(res.headers[header]).toBe(value);
    expect(res.body).toEqual(body);

    // The same answer through a plain node:http response (the proxy of `inbox console`).
    const plain = createServer((_req, out) => writeAnswer(out, answer));
    const direct = await request(plain).post('/').send({});
    expect({ status: direct.status, body: direct.body as unknown }).toEqual({ status, body });
    expect(direct.headers['content-type']).toBe('application/json; charset=utf-8');
    for (const [header, value] of Object.entries(headers)) expect(direct.headers[header]).toBe(value);
  });

  test('bytes: 200, exactly those bytes, as an attachment whose file name cannot break the header', async () => {
    const bytes = Buffer.from([0x3c, 0x73, 0x63, 0x72, 0x69, 0x70, 0x74, 0x3e, 0x00, 0xff, 0xfe, 0x0a]);
    const answer: Answer = {
      kind: 'bytes',
      body: bytes,
      contentType: 'application/octet-stream',
      filename: 'a"b\r\nSet-Cookie: x=1/../é.bin',
    };
    for (const server of [serveAnswer(answer), createServer((_req, out) => writeAnswer(out, answer))]) {
      const res = await request(server)
        .get('/')
        .buffer(true)
        .parse((r, done) => {
          const chunks: Buffer[] = [];
          r.on('data', (c: Buffer) => chunks.push(c));
          r.on('end', () => done(null, Buffer.concat(chunks)));
        });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/octet-stream');
      expect(res.headers['content-disposition']).toBe('attachment; filename="a_b__Set-Cookie__x_1_..__.bin"');
      expect(res.headers['set-cookie']).toBeUndefined();
      expect((res.body as Buffer).equals(bytes)).toBe(true);
    }
  });
});

describe('failureAnswer: a thrown error answered by its class', () => {
  const grpc = (code: number): Error => Object.assign(new Error(`grpc ${code}`), { code });
  test.each<[string, unknown, Answer]>([
    [
      'Firestore unavailable',
      grpc(14),
      { kind: 'retry', code: 'UNAVAILABLE', error: 'temporarily unable to run it', retryAfterSeconds: 10 },
    ],
    [
      'our deadline',
      new DeadlineExceededError('write', 8_000),
      { kind: 'retry', code: 'DEADLINE_EXCEEDED', error: 'temporarily unable to run it', retryAfterSeconds: 10 },
    ],
    ['INVALID_ARGUMENT (a defect)', grpc(3), { kind: 'fail', code: 'GRPC_3', error: 'unable to run it' }],
    ['a missing index (FAILED_PRECONDITION)', grpc(9), { kind: 'fail', code: 'GRPC_9', error: 'unable to run it' }],
    ['a plain bug', new TypeError('x is undefined'), { kind: 'fail', code: 'UNKNOWN', error: 'unable to run it' }],
    [
      'declared permanent outside a job handler',
      new PermanentFailureError('never'),
      { kind: 'fail', code: 'PERMANENT', error: 'unable to run it' },
    ],
  ])('%s', (_name, err, expected) => {
    expect(failureAnswer(classifyFailure(err), 'run it', 10)).toEqual(expected);
  });
});

describe('the shared opening: method check and body parse', () => {
  const Body = z.object({ jobId: z.string().regex(/^[0-9a-f]{40}$/, 'a job id (40 hex digits)') });
  http('openingUnderTest', async (req, res) => {
    const refused = refuseMethod(req, 'use POST with {jobId}');
    if (refused !== null) return send(res, refused);
    const body = parseBody(req, Body);
    send(res, body.ok ? { kind: 'ok', body: { jobId: body.value.jobId } } : body.answer);
  });
  const server = getTestServer('openingUnderTest');

  test.each(['get', 'put', 'delete'] as const)('%s: 405 with Allow: POST and the usage', async (method) => {
    const res = await request(server)[method]('/');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('POST');
    expect(res.body).toEqual({ error: 'use POST with {jobId}' });
  });

  test('a body that fits: parsed', async () => {
    const res = await request(server)
      .post('/')
      .send({ jobId: 'a'.repeat(40) });
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: { jobId: 'a'.repeat(40) } });
  });

  test.each<[string, (r: request.Test) => request.Test]>([
    ['a field of the wrong form', (r) => r.send({ jobId: '../etc' })],
    ['the field missing', (r) => r.send({})],
    ['JSON sent as text', (r) => r.set('content-type', 'text/plain').send(JSON.stringify({ jobId: 'a'.repeat(40) }))],
    ['no body', (r) => r],
  ])('%s: 400 naming what is wrong, never retryable', async (_name, build) => {
    const res = await build(request(server).post('/'));
    expect(res.status).toBe(400);
    expect(res.body.retry).toBeUndefined();
    expect(res.headers['retry-after']).toBeUndefined();
    expect(typeof res.body.error).toBe('string');
    expect(res.body.error.length).toBeGreaterThan(0);
  });

  test('the zod message names the field', async () => {
    const res = await request(server).post('/').send({ jobId: '../etc' });
    expect(res.body.error).toContain('jobId');
    expect(res.body.error).toContain('a job id (40 hex digits)');
  });

  test('malformed JSON is refused 400 by the framework before the function runs', async () => {
    const res = await request(server).post('/').set('content-type', 'application/json').send('{"jobId": ');
    expect(res.status).toBe(400);
  });
});
