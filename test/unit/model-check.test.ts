import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as parseModel from '../../functions/src/bpmn/parse-model';
import { CliFailure, EXIT } from '../../functions/src/cli/failures';
import {
  checkLine,
  checkModelXml,
  checkViews,
  elementKindOf,
  MAX_MODEL_BYTES,
  type ModelCheck,
  noteLines,
  summaryLine,
  xmlKind,
} from '../../functions/src/cli/model-check';
import { checkModelFile, modelCheckCommand, modelFiles } from '../../functions/src/cli/model-check-command';
import { UsageError } from '../../functions/src/cli/parse';

/**
 * `inbox model check` without a process around it: the verdict on a model's
 * XML (the parser's, with the refused element's kind), the lines and JSON it
 * prints, and the command over files and folders in a scratch folder (too
 * large, empty, not a regular file, a parser that throws). The built CLI
 * itself runs in test/cli/model-check.test.ts.
 */
const MODELS = join(__dirname, '..', 'fixtures', 'models');
const fixture = (name: string): string => readFileSync(join(MODELS, name), 'utf8');

/** A process of one none start event, `element` between it and an end event. */
const modelWith = (element: string, extra = ''): string => `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" id="D" targetNamespace="https://example.com/p">
  <bpmn:process id="p" isExecutable="true">
    <bpmn:startEvent id="start" />
    ${element}
    <bpmn:endEvent id="end" />
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="x" />
    <bpmn:sequenceFlow id="f2" sourceRef="x" targetRef="end" />
    ${extra}
  </bpmn:process>
</bpmn:definitions>`;

describe('checkModelXml: the verdict on one model', () => {
  test('a model that loads: its process key, nothing refused', async () => {
    expect(await checkModelXml(fixture('loads.bpmn'), true)).toEqual({
      ok: true,
      processKey: 'checked',
      elementId: null,
      elementKind: null,
      message: null,
      unexpected: false,
      // What `--elements` prints: the one element that runs something, as the engine read it.
      notes: [{ id: 'work', kind: 'serviceTask', name: 'Work', notes: ['async, handler work'] }],
    });
    // Without --elements the notes are not worked out.
    expect((await checkModelXml(fixture('loads.bpmn'))).notes).toBeUndefined();
  });

  test("a refused element: its id, its kind as the XML spells it and the parser's message without the id", async () => {
    const verdict = await checkModelXml(fixture('complex-gateway.bpmn'));
    expect(verdict).toEqual({
      ok: false,
      processKey: null,
      elementId: 'approve',
      elementKind: 'complexGateway',
      message: expect.stringMatching(/^unsupported element complexGateway; supported are: startEvent/),
      unexpected: false,
    });
  });

  test.each([
    ['a complex gateway', '<bpmn:complexGateway id="x" />', 'x', 'complexGateway'],
    ['an ad-hoc sub-process', '<bpmn:adHocSubProcess id="x" />', 'x', 'adHocSubProcess'],
    ['a transaction', '<bpmn:transaction id="x" />', 'x', 'transaction'],
  ])('%s is named with its kind', async (_what, element, elementId, kind) => {
    const verdict = await checkModelXml(modelWith(element));
    expect(verdict).toMatchObject({ ok: false, elementId, elementKind: kind });
    expect(verdict.message).toMatch(new RegExp(`^unsupported element ${kind}; supported are: `));
  });

  test.each([
    [
      'no executable process',
      modelWith('<bpmn:serviceTask id="x" />').replace('isExecutable="true"', ''),
      /^no executable process/,
    ],
    ['not XML', fixture('not-xml.bpmn'), /^not readable as BPMN XML/],
    ['XML that is not BPMN', '<html><body/></html>', /^not readable as BPMN XML/],
  ])('%s: refused without an element', async (_what, xml, message) => {
    const verdict = await checkModelXml(xml);
    expect(verdict).toMatchObject({ ok: false, elementId: null, elementKind: null, unexpected: false });
    expect(verdict.message).toMatch(message);
  });

  test('a message the XML reader fills with the content it could not read is cut to one line of at most 1,001 characters', async () => {
    const verdict = await checkModelXml(`${'x'.repeat(5000)}\n${'y'.repeat(5000)}`);
    expect(verdict.message?.length).toBeLessThanOrEqual(1001);
    expect(verdict.message).not.toMatch(/\n/);
  });

  test('anything else the parser throws is a refusal too, marked unexpected, with its name and message', async () => {
    const spy = jest.spyOn(parseModel, 'parseProcessModel').mockRejectedValueOnce(new TypeError('x is undefined'));
    try {
      const verdict = await checkModelXml(fixture('loads.bpmn'));
      expect(verdict).toMatchObject({ ok: false, elementId: null, elementKind: null, unexpected: true });
      expect(verdict.message).toMatch(
        /^the parser failed with TypeError: x is undefined \(a deploy fails on this file too/,
      );
    } finally {
      spy.mockRestore();
    }
  });
});

describe("the refused element's kind", () => {
  test.each([
    ['bpmn:UserTask', 'userTask'],
    ['bpmn:DataObjectReference', 'dataObjectReference'],
    ['bpmn:Process', 'process'],
    ['bpmndi:BPMNShape', 'bpmndi:BPMNShape'],
  ])('%s is written %s', (type, kind) => {
    expect(xmlKind(type)).toBe(kind);
  });

  test('is null, never a throw, for XML that does not read or an id it does not hold', async () => {
    expect(await elementKindOf('not xml', 'a')).toBeNull();
    expect(await elementKindOf(fixture('complex-gateway.bpmn'), 'nothing-of-that-id')).toBeNull();
    expect(await elementKindOf(fixture('complex-gateway.bpmn'), '__proto__')).toBeNull();
    expect(await elementKindOf(fixture('complex-gateway.bpmn'), 'approval')).toBe('process');
  });
});

describe('the lines and the JSON', () => {
  const loads: ModelCheck = {
    file: 'm/a.bpmn',
    ok: true,
    processKey: 'a',
    elementId: null,
    elementKind: null,
    message: null,
    unexpected: false,
  };
  const refused: ModelCheck = {
    file: 'm/b.bpmn',
    ok: false,
    processKey: null,
    elementId: 'approve',
    elementKind: 'userTask',
    message: 'unsupported element userTask; supported are: …',
    unexpected: false,
  };
  const bare: ModelCheck = {
    ...refused,
    file: 'm/c.bpmn',
    elementId: null,
    elementKind: null,
    message: 'no executable process',
  };

  test('one line per file: loads with the process key, or refused with kind, id and message as far as known', () => {
    expect([loads, refused, bare, { ...refused, elementKind: null }].map(checkLine)).toEqual([
      'm/a.bpmn: loads, process a',
      'm/b.bpmn: refused: userTask approve: unsupported element userTask; supported are: …',
      'm/c.bpmn: refused: no executable process',
      'm/b.bpmn: refused: approve: unsupported element userTask; supported are: …',
    ]);
  });

  test('the closing line counts files, loads and refusals', () => {
    expect(summaryLine([loads, refused, bare])).toBe('3 files: 1 loads, 2 refused');
    expect(summaryLine([loads, loads])).toBe('2 files: 2 load, 0 refused');
    expect(summaryLine([refused])).toBe('1 file: 0 load, 1 refused');
  });

  test('--json: exactly file, ok, processKey, elementId, elementKind, message per file, in order', () => {
    expect(checkViews([loads, refused])).toEqual([
      { file: 'm/a.bpmn', ok: true, processKey: 'a', elementId: null, elementKind: null, message: null },
      {
        file: 'm/b.bpmn',
        ok: false,
        processKey: null,
        elementId: 'approve',
        elementKind: 'userTask',
        message: 'unsupported element userTask; supported are: …',
      },
    ]);
  });

  const notes = [
    { id: 'work', kind: 'serviceTask', name: 'Work', notes: ['async, handler work'] },
    { id: 'yes', kind: 'sequenceFlow', name: null, notes: ['condition ${ ok }', 'a second note'] },
  ];

  test('--elements: one indented line per element, its notes joined by "; "; none for a refused file', () => {
    expect(noteLines({ ...loads, notes })).toEqual([
      '  work serviceTask: async, handler work',
      '  yes sequenceFlow: condition ${ ok }; a second note',
    ]);
    expect(noteLines(loads)).toEqual([]);
    expect(noteLines(refused)).toEqual([]);
  });

  test('--json --elements: elements on each file that loads (empty when none runs anything), never on a refused one', () => {
    const views = checkViews([{ ...loads, notes }, loads, refused], true);
    expect(views.map((v) => v.elements)).toEqual([notes, [], undefined]);
    expect(Object.keys(views[2] ?? {})).not.toContain('elements');
    expect(checkViews([{ ...loads, notes }]).map((v) => Object.keys(v))).toEqual([
      ['file', 'ok', 'processKey', 'elementId', 'elementKind', 'message'],
    ]);
  });
});

describe('the command over files and folders', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'model-check-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const put = (path: string, text: string): string => {
    const file = join(dir, path);
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, text);
    return file;
  };
  /** Runs the command: what it printed, and the exit code its throw would give. */
  const run = async (paths: readonly string[], json = false): Promise<{ out: string[]; code: number }> => {
    const out: string[] = [];
    try {
      await modelCheckCommand({ out: (t) => out.push(t) }, paths, json);
      return { out, code: EXIT.OK };
    } catch (err) {
      if (err instanceof CliFailure) return { out, code: err.exitCode };
      if (err instanceof UsageError) return { out, code: EXIT.USAGE };
      throw err;
    }
  };

  test('a folder: every *.bpmn below it in name order, not other files, node_modules or hidden folders', async () => {
    put('b.bpmn', fixture('loads.bpmn'));
    put('a/deeper/c.bpmn', fixture('loads.bpmn'));
    put('a/notes.txt', 'not a model');
    put('node_modules/pkg/x.bpmn', 'not checked');
    put('.hidden/y.bpmn', 'not checked');
    expect((await modelFiles([dir])).map((f) => f.file)).toEqual([join(dir, 'a/deeper/c.bpmn'), join(dir, 'b.bpmn')]);
    const { out, code } = await run([dir]);
    expect(code).toBe(EXIT.OK);
    expect(out).toEqual([
      `${join(dir, 'a/deeper/c.bpmn')}: loads, process checked`,
      `${join(dir, 'b.bpmn')}: loads, process checked`,
      '2 files: 2 load, 0 refused',
    ]);
  });

  test('a file given by name is checked whatever its name, and a file named twice once', async () => {
    const file = put('model.xml', fixture('loads.bpmn'));
    const other = put('other.bpmn', fixture('loads.bpmn'));
    expect((await modelFiles([file, dir, file])).map((f) => f.file)).toEqual([file, other]);
  });

  test('any refusal: every line still printed, then exit 1 with the count', async () => {
    put('1.bpmn', fixture('complex-gateway.bpmn'));
    put('2.bpmn', fixture('loads.bpmn'));
    const out: string[] = [];
    const failure = await modelCheckCommand({ out: (t) => out.push(t) }, [dir], false).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(CliFailure);
    expect(failure).toMatchObject({
      exitCode: EXIT.FAILED,
      message: '1 of 2 models refused: fix what each line names, then check again',
    });
    expect(out).toEqual([
      expect.stringMatching(/1\.bpmn: refused: complexGateway approve: unsupported element complexGateway/),
      `${join(dir, '2.bpmn')}: loads, process checked`,
      '2 files: 1 loads, 1 refused',
    ]);
  });

  test('--elements: the notes under the file that loads, nothing under the refused one', async () => {
    put('1.bpmn', fixture('complex-gateway.bpmn'));
    put('2.bpmn', fixture('loads.bpmn'));
    const out: string[] = [];
    await expect(modelCheckCommand({ out: (t) => out.push(t) }, [dir], false, true)).rejects.toBeInstanceOf(CliFailure);
    expect(out).toEqual([
      expect.stringMatching(/1\.bpmn: refused: complexGateway approve: /),
      `${join(dir, '2.bpmn')}: loads, process checked`,
      '  work serviceTask: async, handler work',
      '2 files: 1 loads, 1 refused',
    ]);
  });

  test('--json: one array and nothing else on stdout', async () => {
    put('1.bpmn', fixture('complex-gateway.bpmn'));
    const { out, code } = await run([dir], true);
    expect(code).toBe(EXIT.FAILED);
    expect(out).toHaveLength(1);
    expect(JSON.parse(out[0] ?? '')).toEqual([
      {
        file: join(dir, '1.bpmn'),
        ok: false,
        processKey: null,
        elementId: 'approve',
        elementKind: 'complexGateway',
        message: expect.stringMatching(/^unsupported element complexGateway/),
      },
    ]);
  });

  test.each([
    ['a path that does not exist', (d: string) => [join(d, 'missing.bpmn')], /missing\.bpmn: no such file or folder/],
    ['a folder without a .bpmn file', (d: string) => [d], /: no \.bpmn file in this folder or below it$/],
  ])('%s is bad usage (exit 2): nothing is checked or printed', async (_what, paths, message) => {
    put('a/notes.txt', 'not a model');
    const files = put('ok.bpmn', fixture('loads.bpmn'));
    const args = paths(join(dir, 'a'));
    await expect(modelFiles([files, ...args])).rejects.toThrow(message);
    expect(await run([files, ...args])).toEqual({ out: [], code: EXIT.USAGE });
  });

  test('a file over 5 MiB is refused unread, with its size', async () => {
    // Sparse: one byte over the limit, without writing 5 MiB.
    const file = put('huge.bpmn', '');
    truncateSync(file, MAX_MODEL_BYTES + 1);
    const spy = jest.spyOn(parseModel, 'parseProcessModel');
    try {
      expect(await checkModelFile(file)).toMatchObject({
        ok: false,
        elementId: null,
        message: `${MAX_MODEL_BYTES + 1} bytes, over the 5 MiB a model may have: not read (a model is a few hundred KiB at most; is this the right file?)`,
      });
      expect(spy).not.toHaveBeenCalled();
    } finally {
      spy.mockRestore();
    }
  });

  test('an empty file is refused as empty', async () => {
    expect(await checkModelFile(put('empty.bpmn', ' \n'))).toMatchObject({
      ok: false,
      message: 'the file is empty: a model is BPMN 2.0 XML, drawn in a modeller and saved as .bpmn',
    });
  });

  test('a FIFO named .bpmn is refused as not a regular file, without waiting for a writer', async () => {
    const fifo = join(dir, 'pipe.bpmn');
    execFileSync('mkfifo', [fifo]);
    put('ok.bpmn', fixture('loads.bpmn'));
    const { out, code } = await run([dir]);
    expect(code).toBe(EXIT.FAILED);
    expect(out).toEqual([
      `${join(dir, 'ok.bpmn')}: loads, process checked`,
      `${fifo}: refused: not a regular file: give .bpmn files, or folders to search for them`,
      '2 files: 1 loads, 1 refused',
    ]);
  });

  test('a parser that throws something other than a ModelError: that file refused, the next still checked', async () => {
    put('1.bpmn', fixture('loads.bpmn'));
    put('2.bpmn', fixture('loads.bpmn'));
    const spy = jest.spyOn(parseModel, 'parseProcessModel').mockRejectedValueOnce(new RangeError('too deep'));
    try {
      const { out, code } = await run([dir]);
      expect(code).toBe(EXIT.FAILED);
      expect(out).toEqual([
        expect.stringMatching(/1\.bpmn: refused: the parser failed with RangeError: too deep/),
        `${join(dir, '2.bpmn')}: loads, process checked`,
        '2 files: 1 loads, 1 refused',
      ]);
    } finally {
      spy.mockRestore();
    }
  });
});
