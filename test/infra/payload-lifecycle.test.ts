/**
 * infra/storage/payload-lifecycle.json, the payload bucket's lifecycle: read
 * by gcloud's own converter for --lifecycle-file (tools/gcloud-schema), and
 * unable to delete a live object (PARKED payloads are kept for good; the
 * sweep deletes DONE ones, decision 5 of the claim check).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkSchemas } from '../../tools/gcloud-schema/schema';
import { ROOT, sandbox, useSandbox } from './helpers';

useSandbox();

const FILE = join(ROOT, 'infra', 'storage', 'payload-lifecycle.json');
interface Rule {
  action: { type: string };
  condition: Record<string, unknown>;
}
const rules = (): Rule[] => (JSON.parse(readFileSync(FILE, 'utf8')) as { rule: Rule[] }).rule;

describe('the payload bucket lifecycle', () => {
  it("decodes with gcloud's own --lifecycle-file converter, without an unknown field", () => {
    expect(checkSchemas([{ kind: 'bucket-lifecycle', file: FILE }]).map((r) => r.errors)).toEqual([[]]);
  }, 120_000);

  it('the check refuses what gcloud would refuse: a misspelt condition, a wrong type', () => {
    const broken = rules().map((r) =>
      r.action.type === 'Delete' ? { ...r, condition: { isLive: 'false', daysSinceNoncurrent: 1 } } : r,
    );
    const file = join(sandbox(), 'broken-lifecycle.json');
    writeFileSync(file, JSON.stringify({ rule: broken }));
    const [result] = checkSchemas([{ kind: 'bucket-lifecycle', file }]);
    expect(result?.errors).toHaveLength(1);
    expect(result?.errors[0]).toMatch(/^InvalidUrlError: Found invalid JSON\/YAML for the lifecycle rule \(/);
  }, 120_000);

  it('deletes no live object: every Delete is limited to noncurrent versions; incomplete uploads are aborted after a day', () => {
    const all = rules();
    expect(all.map((r) => r.action.type).sort()).toEqual(['AbortIncompleteMultipartUpload', 'Delete']);
    for (const r of all.filter((x) => x.action.type === 'Delete'))
      expect(r.condition).toEqual({ isLive: false, daysSinceNoncurrentTime: 1 });
    // No other action (SetStorageClass would move PARKED payloads; nothing asks for it).
    expect(all.find((r) => r.action.type === 'AbortIncompleteMultipartUpload')?.condition).toEqual({ age: 1 });
  });
});
