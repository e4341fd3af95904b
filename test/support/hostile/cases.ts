import fc from 'fast-check';
import {
  type CaseBuilder,
  type Endpoint,
  type Expected,
  formEnvelope,
  type HostileRequest,
  wellFormedEnvelope,
} from './envelopes';
import {
  envelopeDefect,
  formNotEnvelope,
  frameworkRefusal,
  tooLarge,
  wrongContentType,
  wrongMethod,
} from './not-a-push';
import {
  badBase64,
  hugeInvalid,
  hugeValidCompletion,
  loneSurrogateInPayload,
  nameMissing,
  notJson,
  notUtf8,
  schemaViolation,
  unknownName,
  validCompletion,
} from './payloads';
import { seededRandom } from '../../../tools/seeded-random';

/** One generated request and the answer (and inbox document) it must get. */
export interface HostileCase {
  /** Position in the sending order; with the seed, enough to replay the case. */
  readonly index: number;
  readonly className: string;
  readonly request: HostileRequest;
  readonly expected: Expected;
}

/** A class of hostile input and how many of it one run sends. */
export interface HostileClass {
  readonly name: string;
  readonly count: number;
  readonly arbitrary: fc.Arbitrary<CaseBuilder>;
}

/**
 * The classes sent to one endpoint, 10,000 requests in all. Well-formed
 * envelopes (stored, 2,526) are a quarter: each costs emulator writes, which
 * dominate the run time; refusals cost none. Bodies near the limit are few
 * for the same reason.
 */
export function hostileClasses(endpoint: Endpoint, maxBodyBytes: number): HostileClass[] {
  const near = Math.floor(maxBodyBytes * 0.7);
  const wf = (payloads: Parameters<typeof wellFormedEnvelope>[1], many = false) =>
    wellFormedEnvelope(endpoint, payloads, many);
  return [
    { name: 'valid completion', count: 1_000, arbitrary: wf(validCompletion) },
    { name: 'valid completion, 100-200 attributes', count: 150, arbitrary: wf(validCompletion, true) },
    { name: 'valid completion, form-encoded', count: 50, arbitrary: formEnvelope(endpoint, validCompletion) },
    { name: 'valid completion near the body limit', count: 3, arbitrary: wf(hugeValidCompletion(near)) },
    { name: 'payload: invalid base64', count: 200, arbitrary: wf(badBase64) },
    { name: 'payload: no message name', count: 150, arbitrary: wf(nameMissing) },
    { name: 'payload: unknown message name', count: 150, arbitrary: wf(unknownName) },
    { name: 'payload: not UTF-8', count: 150, arbitrary: wf(notUtf8) },
    { name: 'payload: not JSON', count: 200, arbitrary: wf(notJson) },
    {
      name: 'payload: schema violation (wrong types, missing fields, deep)',
      count: 300,
      arbitrary: wf(schemaViolation),
    },
    { name: 'payload: lone surrogate in an identifier', count: 100, arbitrary: wf(loneSurrogateInPayload) },
    { name: 'payload: 100-200 attributes, schema violation', count: 50, arbitrary: wf(schemaViolation, true) },
    { name: 'payload: not JSON, near the body limit', count: 3, arbitrary: wf(hugeInvalid(near)) },
    { name: 'payload: form-encoded, not JSON', count: 20, arbitrary: formEnvelope(endpoint, notJson) },
    { name: 'not a push: one envelope defect', count: 5_900, arbitrary: envelopeDefect },
    { name: 'not a push: content type not JSON', count: 1_000, arbitrary: wrongContentType },
    { name: 'not a push: form body, not an envelope', count: 100, arbitrary: formNotEnvelope },
    { name: 'not a push: method not POST', count: 100, arbitrary: wrongMethod },
    { name: 'not a push: over the body limit', count: 4, arbitrary: tooLarge(maxBodyBytes) },
    { name: 'not a push: refused by the framework body parser', count: 370, arbitrary: frameworkRefusal },
  ];
}

/**
 * Every case of `classes`, generated from `seed` (class i samples with seed
 * + i) and shuffled by it, so classes interleave in flight and the same seed
 * replays the same requests in the same order.
 */
export function generateCases(classes: readonly HostileClass[], seed: number): HostileCase[] {
  const drafts = classes.flatMap((c, ci) =>
    fc
      .sample(c.arbitrary, { seed: seed + ci, numRuns: c.count })
      .map((build, i) => ({ className: c.name, ...build(`${ci}.${i}`) })),
  );
  const random = seededRandom(seed);
  for (let i = drafts.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [drafts[i], drafts[j]] = [drafts[j]!, drafts[i]!];
  }
  return drafts.map((d, index) => ({ index, ...d }));
}
