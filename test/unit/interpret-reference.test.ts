import { createHash } from 'node:crypto';
import { interpretMessage } from '../../functions/src/receiver/interpret';
import { FIXTURE_REGISTRY } from '../support/app';
import type { PushEnvelope } from '../../functions/src/inbox/draft';

/**
 * Claim-check references at receipt (interpret.ts): the type's declared
 * field (`report`) or attribute (`reportRef`), read for form and bucket,
 * never fetched. What fails is an InvalidDraft (PARKED INVALID_PAYLOAD) whose
 * reason tells the sender what to fix.
 */
const CLAIMS = { referenceBuckets: ['acme-reports', 'acme.reports.eu'] } as const;
const REF = 'gs://acme-reports/cases/C-1/report.json#1712345678901234';
const valid = { caseId: 'C-1', completedItems: 5, completionTimestamp: '2026-11-29T10:00:00Z' };

function env(payload: Record<string, unknown>, extra: Record<string, string> = {}): PushEnvelope {
  const data = Buffer.from(JSON.stringify(payload)).toString('base64');
  return {
    messageId: 'm-1',
    subscription: 'projects/p/subscriptions/s',
    data,
    attributes: { eventType: 'TaskCompleted', ...extra },
    publishTime: null,
    orderingKey: null,
    deliveryAttempt: null,
  };
}

describe('a valid reference', () => {
  test.each<[string, PushEnvelope, 'field' | 'attribute', string]>([
    ['in the field', env({ ...valid, report: REF }), 'field', 'report'],
    ['in the attribute', env(valid, { reportRef: REF }), 'attribute', 'reportRef'],
    ['in both, the same text', env({ ...valid, report: REF }, { reportRef: REF }), 'field', 'report'],
  ])('%s is the draft reference, pinned to its generation', (_name, envelope, carriedIn, name) => {
    const draft = interpretMessage(envelope, FIXTURE_REGISTRY, CLAIMS);
    expect(draft.kind).toBe('valid');
    if (draft.kind !== 'valid') return;
    expect(draft.reference).toEqual({
      bucket: 'acme-reports',
      object: 'cases/C-1/report.json',
      generation: '1712345678901234',
      uri: REF,
      carriedIn,
      name,
      variable: 'caseReport',
    });
    // The reference is content: it is in the hashed payload whichever way it came.
    expect(draft.payload.report).toBe(REF);
    expect(draft.payloadHash).toBe(createHash('sha256').update(draft.canonicalPayload).digest('hex'));
  });

  test('a dotted bucket of the allow-list is accepted', () => {
    const draft = interpretMessage(
      env({ ...valid, report: 'gs://acme.reports.eu/r.json#7' }),
      FIXTURE_REGISTRY,
      CLAIMS,
    );
    expect(draft.kind === 'valid' && draft.reference?.bucket).toBe('acme.reports.eu');
  });

  test('no reference: none on the draft, the payload as the schema made it', () => {
    const draft = interpretMessage(env(valid), FIXTURE_REGISTRY, CLAIMS);
    expect(draft.kind === 'valid' && draft.reference).toBeNull();
    expect(draft.kind === 'valid' && draft.payload).toEqual(valid);
  });

  test('the reference is not part of the dedup identity, but of the payload hash', () => {
    const byField = interpretMessage(env({ ...valid, report: REF }), FIXTURE_REGISTRY, CLAIMS);
    const byAttribute = interpretMessage(env(valid, { reportRef: REF }), FIXTURE_REGISTRY, CLAIMS);
    const other = interpretMessage(
      env(valid, { reportRef: 'gs://acme-reports/cases/C-1/report.json#1712345678909999' }),
      FIXTURE_REGISTRY,
      CLAIMS,
    );
    const none = interpretMessage(env(valid), FIXTURE_REGISTRY, CLAIMS);
    // One message: same id for all; the same reference either way is the same payload (a DUPLICATE) ...
    expect(new Set([byField.id, byAttribute.id, other.id, none.id]).size).toBe(1);
    expect(byAttribute.payloadHash).toBe(byField.payloadHash);
    // ... and another report (a new upload) is another payload: a KEY_COLLISION, never dropped as a duplicate.
    expect(other.payloadHash).not.toBe(byAttribute.payloadHash);
    expect(none.payloadHash).not.toBe(byAttribute.payloadHash);
  });
});

describe('a reference that is refused (INVALID_PAYLOAD)', () => {
  const refused: Array<[string, PushEnvelope, readonly string[]]> = [
    [
      'no generation',
      env({ ...valid, report: 'gs://acme-reports/cases/report.json' }),
      ['field "report"', 'pins the object generation'],
    ],
    [
      'an empty generation',
      env({ ...valid, report: 'gs://acme-reports/cases/report.json#' }),
      ['field "report"', 'generation is a positive decimal integer'],
    ],
    [
      'generation 0',
      env({ ...valid, report: 'gs://acme-reports/cases/report.json#0' }),
      ['generation is a positive decimal integer'],
    ],
    [
      'a generation that is not a number',
      env({ ...valid, report: 'gs://acme-reports/cases/report.json#latest' }),
      ['generation is a positive decimal integer'],
    ],
    [
      'not a gs:// URI',
      env({ ...valid, report: 'https://storage.googleapis.com/acme-reports/r.json' }),
      ['the form gs://bucket/object#generation'],
    ],
    ['an empty text', env({ ...valid, report: '' }), ['field "report"', 'the form gs://bucket/object#generation']],
    ['no object', env({ ...valid, report: 'gs://acme-reports#5' }), ['names a bucket and an object']],
    ['an empty object name', env({ ...valid, report: 'gs://acme-reports/#5' }), ['an object name has 1 to 1024 bytes']],
    [
      'an upper-case bucket',
      env({ ...valid, report: 'gs://Acme-Reports/r.json#5' }),
      ['a bucket name is 3 to 222 lowercase'],
    ],
    [
      'a line feed in the object name',
      env({ ...valid, report: 'gs://acme-reports/a\nb#5' }),
      ['no carriage return or line feed'],
    ],
    [
      'a malformed attribute',
      env(valid, { reportRef: 'acme-reports/r.json#5' }),
      ['attribute "reportRef"', 'the form gs://bucket/object#generation'],
    ],
    ['an empty attribute', env(valid, { reportRef: '' }), ['attribute "reportRef"']],
    [
      'a foreign bucket in the field',
      env({ ...valid, report: 'gs://evil-bucket/r.json#5' }),
      [
        'field "report"',
        'bucket "evil-bucket"',
        'INBOX_REFERENCE_BUCKETS',
        'allowed: acme-reports, acme.reports.eu',
        'caseReport',
      ],
    ],
    [
      'a foreign bucket in the attribute',
      env(valid, { reportRef: 'gs://evil-bucket/r.json#5' }),
      ['attribute "reportRef"', 'bucket "evil-bucket"', 'INBOX_REFERENCE_BUCKETS'],
    ],
    [
      'field and attribute differ',
      env({ ...valid, report: REF }, { reportRef: 'gs://acme-reports/other.json#9' }),
      ['field "report"', 'attribute "reportRef"', 'different references'],
    ],
    [
      'line items inline and a reference in the field',
      env({ ...valid, report: REF, lineItems: [{ itemId: 'A', quantity: 1 }] }),
      ['both inline (field "lineItems")', 'by reference (field "report")', 'send one of them'],
    ],
    [
      'line items inline and a reference in the attribute',
      env({ ...valid, lineItems: [] }, { reportRef: REF }),
      ['both inline (field "lineItems")', 'attribute "reportRef"'],
    ],
    [
      'a report text over the schema bound',
      env({ ...valid, report: `gs://acme-reports/${'x'.repeat(1300)}#5` }),
      ['does not match its schema', 'report'],
    ],
  ];
  test.each(refused)('%s', (_name, envelope, fragments) => {
    const draft = interpretMessage(envelope, FIXTURE_REGISTRY, CLAIMS);
    expect(draft.kind).toBe('invalid');
    if (draft.kind !== 'invalid') return;
    expect(draft.messageName).toBe('TaskCompleted');
    for (const fragment of fragments) expect(draft.error).toContain(fragment);
  });

  test('with no bucket allowed (the default), every reference is refused and the reason says none is configured', () => {
    const draft = interpretMessage(env({ ...valid, report: REF }), FIXTURE_REGISTRY, { referenceBuckets: [] });
    expect(draft.kind === 'invalid' && draft.error).toContain('INBOX_REFERENCE_BUCKETS (none is configured)');
  });

  test('a type without a claim check ignores a reportRef attribute', () => {
    const release = { caseId: 'C-1', openedAt: '2026-11-29T10:00:00Z' };
    const draft = interpretMessage(
      { ...env(release, { reportRef: 'nonsense' }), attributes: { eventType: 'TaskOpened', reportRef: 'nonsense' } },
      FIXTURE_REGISTRY,
      CLAIMS,
    );
    expect(draft.kind === 'valid' && draft.reference).toBeNull();
  });
});

test("with a reference, an offloaded payload would not take the reference's variable", () => {
  const withRef = interpretMessage(env({ ...valid, report: REF }), FIXTURE_REGISTRY, CLAIMS);
  const without = interpretMessage(env(valid), FIXTURE_REGISTRY, CLAIMS);
  expect(withRef.kind === 'valid' && withRef.offloadVariable).toBe('offloadedPayload');
  expect(without.kind === 'valid' && without.offloadVariable).toBe('caseReport');
});
