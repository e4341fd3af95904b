import { doneRetention, messageVariables, offloadObjectName, summarize } from '../../functions/src/inbox/claim-check';
import { holdingInstanceId, instanceHold } from '../../functions/src/inbox/instance-hold';
import type { OffloadedPayload, ReferenceClaim } from '../../functions/src/inbox/claim-check';

const reference: ReferenceClaim = {
  bucket: 'reports',
  object: 'r.json',
  generation: '7',
  uri: 'gs://reports/r.json#7',
  carriedIn: 'field',
  name: 'report',
  variable: 'caseReport',
};
const offloaded: OffloadedPayload = {
  bucket: 'inbox',
  object: 'payloads/id/h.json',
  generation: '9',
  uri: 'gs://inbox/payloads/id/h.json#9',
  bytes: 600_000,
  variable: 'caseReport',
};

describe('summarize', () => {
  test('keeps scalars and small structures, drops what is over 1 KiB of JSON', () => {
    const items = Array.from({ length: 100 }, (_, i) => ({ itemId: `I-${i}`, quantity: 1 }));
    const summary = summarize({
      caseId: 'C-1',
      completedItems: 3,
      flag: false,
      none: null,
      small: { a: 1 },
      lineItems: items,
      gone: undefined,
    });
    expect(summary).toEqual({ caseId: 'C-1', completedItems: 3, flag: false, none: null, small: { a: 1 } });
  });
  test('a long scalar string stays: the schema bounds it', () => {
    expect(summarize({ description: 'x'.repeat(4_096) })).toEqual({ description: 'x'.repeat(4_096) });
  });
});

describe('messageVariables', () => {
  test('the payload alone without claims, also on documents from before claim checks (fields absent)', () => {
    expect(messageVariables({ payload: { a: 1 } })).toEqual({ a: 1 });
    expect(messageVariables({ payload: null, reference: null, offloaded: null })).toEqual({});
  });
  test('each claim adds its uri under its variable', () => {
    expect(messageVariables({ payload: { a: 1, report: reference.uri }, reference, offloaded: null })).toEqual({
      a: 1,
      report: reference.uri,
      caseReport: reference.uri,
    });
    expect(messageVariables({ payload: { a: 1 }, reference: null, offloaded })).toEqual({
      a: 1,
      caseReport: offloaded.uri,
    });
  });
});

describe('retention and names', () => {
  const now = new Date('2026-12-01T00:00:00Z');
  test('an offloaded DONE document gets payloadExpireAt, never expireAt (the TTL would orphan its object)', () => {
    expect(doneRetention({ offloaded }, now, 1_000)).toEqual({ payloadExpireAt: new Date(now.getTime() + 1_000) });
    expect(doneRetention({ offloaded: null }, now, 1_000)).toEqual({ expireAt: new Date(now.getTime() + 1_000) });
    expect(doneRetention({}, now, 1_000)).toEqual({ expireAt: new Date(now.getTime() + 1_000) });
    // Raw bytes in rawChunks: the TTL would delete the document and leave its subcollection, so the sweep takes it.
    expect(doneRetention({ offloaded: null, rawDataChunks: 1 }, now, 1_000)).toEqual({
      payloadExpireAt: new Date(now.getTime() + 1_000),
    });
    expect(doneRetention({ offloaded: null, rawDataChunks: 0 }, now, 1_000)).toEqual({
      expireAt: new Date(now.getTime() + 1_000),
    });
  });
  test('object names are deterministic per id and payload', () => {
    expect(offloadObjectName('abc', 'ff')).toBe('payloads/abc/ff.json');
    expect(offloadObjectName('abc', 'ee')).not.toBe(offloadObjectName('abc', 'ff'));
  });
});

describe('what holds an offloaded DONE document past its retention (inbox/instance-hold.ts)', () => {
  const offloaded = {
    bucket: 'b',
    object: 'payloads/x/y.json',
    generation: '5',
    uri: 'gs://b/payloads/x/y.json#5',
    bytes: 10,
    variable: 'caseReport',
  };
  test.each([
    ['correlated by the relay', { status: 'DONE', correlatedVia: 'RELAY', processInstanceId: 'I', offloaded }, 'I'],
    ['started its instance', { status: 'DONE', correlatedVia: 'START', processInstanceId: 'I', offloaded }, 'I'],
    [
      'dismissed: it went into no instance',
      { status: 'DONE', correlatedVia: 'DISMISSED', processInstanceId: 'I', offloaded },
      null,
    ],
    [
      'an inline payload: all of it is in the variables',
      { status: 'DONE', correlatedVia: 'RELAY', processInstanceId: 'I', offloaded: null },
      null,
    ],
    ['PARKED', { status: 'PARKED', processInstanceId: 'I', offloaded }, null],
    ['no instance recorded', { status: 'DONE', correlatedVia: 'RELAY', processInstanceId: null, offloaded }, null],
  ])('%s', (_name, doc, instance) => {
    expect(holdingInstanceId(doc)).toBe(instance);
  });

  test.each([
    ['gone', undefined, null],
    ['RUNNING', { status: 'RUNNING', jobsPendingSince: null }, 'RUNNING'],
    ['INCIDENT', { status: 'INCIDENT', jobsPendingSince: null }, 'INCIDENT'],
    ['COMPLETED', { status: 'COMPLETED', jobsPendingSince: null }, null],
    ['COMPLETED, an older layout without the field', { status: 'COMPLETED' }, null],
    [
      'COMPLETED with a PENDING job',
      { status: 'COMPLETED', jobsPendingSince: new Date('2026-12-01T00:00:00Z') },
      'COMPLETED with a PENDING job',
    ],
  ])('an instance %s', (_name, instance, held) => {
    expect(instanceHold(instance)).toBe(held);
  });
});
