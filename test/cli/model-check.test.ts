import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnCli } from './run-cli';

/**
 * `inbox model check` as a modeller runs it before a deploy: the built CLI in
 * its own process (`node dist/cli/main.js model check …`, built by
 * `npm test`), with nothing but PATH and HOME: no project, no Firestore, no
 * credentials. The fixtures (test/fixtures/models/): a model that loads, one
 * refused for a call activity, a file that is not XML, an empty file; the file
 * over 5 MiB is made sparse in a scratch folder (not kept in git). Exit codes,
 * the lines and the JSON; the pure part is test/unit/model-check.test.ts.
 * `--elements` over a public Camunda 8 model (test/fixtures/camunda8/).
 */
const MODELS = join(__dirname, '..', 'fixtures', 'models');
const at = (name: string): string => join(MODELS, name);
const SAY_HELLO = join(__dirname, '..', 'fixtures', 'camunda8', 'say_hello.bpmn');
const home = mkdtempSync(join(tmpdir(), 'inbox-model-check-'));
const inbox = spawnCli({ PATH: process.env.PATH, HOME: home });
/** A folder that holds no .bpmn file. */
const noModels = mkdtempSync(join(home, 'no-models-'));
const SUPPORTED = /^unsupported element complexGateway; supported are: startEvent /;
const NOT_READABLE = /^not readable as BPMN XML: .*missing start tag$/;
/** What --json says of the fixture with a complex gateway. */
const COMPLEX_GATEWAY_VIEW = {
  file: at('complex-gateway.bpmn'),
  ok: false,
  processKey: null,
  elementId: 'approve',
  elementKind: 'complexGateway',
  message: expect.stringMatching(SUPPORTED),
};

afterAll(() => rmSync(home, { recursive: true, force: true }));

test('a model that loads: its line with the process key, exit 0, nothing on stderr', async () => {
  const r = await inbox('model', 'check', at('loads.bpmn'));
  expect(r).toMatchObject({
    code: 0,
    out: `${at('loads.bpmn')}: loads, process checked\n1 file: 1 loads, 0 refused`,
    err: '',
  });
});

test('a folder of fixtures: one line per file in name order, then exit 1 with one line on stderr', async () => {
  const r = await inbox('model', 'check', MODELS);
  const [first, ...rest] = r.out.split('\n');
  // The file, the element's kind and id, then the parser's message.
  const refusedAt = `${at('complex-gateway.bpmn')}: refused: complexGateway approve: `;
  expect(first?.slice(0, refusedAt.length)).toBe(refusedAt);
  expect(first?.slice(refusedAt.length)).toMatch(SUPPORTED);
  expect(rest).toEqual([
    `${at('empty.bpmn')}: refused: the file is empty: a model is BPMN 2.0 XML, drawn in a modeller and saved as .bpmn`,
    `${at('loads.bpmn')}: loads, process checked`,
    expect.stringMatching(/^.*not-xml\.bpmn: refused: not readable as BPMN XML: /),
    '4 files: 1 loads, 3 refused',
  ]);
  expect({ code: r.code, err: r.err }).toEqual({
    code: 1,
    err: 'inbox: 3 of 4 models refused: fix what each line names, then check again',
  });
});

test('--json, before or after the command: the array CI reads, one object per file', async () => {
  for (const args of [
    ['--json', 'model', 'check', MODELS],
    ['model', 'check', MODELS, '--json'],
  ]) {
    const r = await inbox(...args);
    expect(r.code).toBe(1);
    expect(r.json()).toEqual([
      COMPLEX_GATEWAY_VIEW,
      {
        file: at('empty.bpmn'),
        ok: false,
        processKey: null,
        elementId: null,
        elementKind: null,
        message: 'the file is empty: a model is BPMN 2.0 XML, drawn in a modeller and saved as .bpmn',
      },
      { file: at('loads.bpmn'), ok: true, processKey: 'checked', elementId: null, elementKind: null, message: null },
      {
        file: at('not-xml.bpmn'),
        ok: false,
        processKey: null,
        elementId: null,
        elementKind: null,
        message: expect.stringMatching(NOT_READABLE),
      },
    ]);
  }
});

test('a file over 5 MiB is refused unread, and the files after it are still checked', async () => {
  const dir = mkdtempSync(join(home, 'huge-'));
  const huge = join(dir, 'huge.bpmn');
  writeFileSync(huge, '');
  truncateSync(huge, 6 * 1024 * 1024);
  const r = await inbox('--json', 'model', 'check', huge, at('loads.bpmn'));
  expect(r.code).toBe(1);
  expect(r.json()).toEqual([
    {
      file: huge,
      ok: false,
      processKey: null,
      elementId: null,
      elementKind: null,
      message:
        '6291456 bytes, over the 5 MiB a model may have: not read (a model is a few hundred KiB at most; is this the right file?)',
    },
    { file: at('loads.bpmn'), ok: true, processKey: 'checked', elementId: null, elementKind: null, message: null },
  ]);
});

test.each([
  [['model', 'check', at('no-such.bpmn')], /^inbox: .*no-such\.bpmn: no such file or folder: give \.bpmn files/],
  [['model', 'check'], /missing required argument 'paths'/],
  [['model', 'check', noModels], /: no \.bpmn file in this folder or below it$/],
])('bad usage %j: exit 2, nothing on stdout', async (args, says) => {
  const r = await inbox(...args);
  expect({ code: r.code, out: r.out }).toEqual({ code: 2, out: '' });
  expect(r.err).toMatch(says);
});

describe('--elements: what each element runs, as the engine read it', () => {
  const helloTask =
    '  Activity_0apsury serviceTask: handler of type hello_task (zeebe:taskDefinition); inputs: name ← =name; outputs: message ← =message';
  const helloNote = {
    id: 'Activity_0apsury',
    kind: 'serviceTask',
    name: 'Say hello',
    notes: ['handler of type hello_task (zeebe:taskDefinition)', 'inputs: name ← =name', 'outputs: message ← =message'],
  };
  const helloView = {
    file: SAY_HELLO,
    ok: true,
    processKey: 'hello_process',
    elementId: null,
    elementKind: null,
    message: null,
  };

  test('an indented line per element under a file that loads, nothing under a refused file', async () => {
    const r = await inbox('model', 'check', '--elements', SAY_HELLO, at('complex-gateway.bpmn'));
    expect(r.code).toBe(1);
    expect(r.out.split('\n')).toEqual([
      `${SAY_HELLO}: loads, process hello_process`,
      helloTask,
      expect.stringMatching(/complex-gateway\.bpmn: refused: complexGateway approve: unsupported element/),
      '2 files: 1 loads, 1 refused',
    ]);
  });

  test('with --json: an elements array on each file that loads, and only with the flag', async () => {
    const withFlag = await inbox('--json', 'model', 'check', '--elements', SAY_HELLO, at('complex-gateway.bpmn'));
    expect(withFlag.code).toBe(1);
    expect(withFlag.json()).toEqual([{ ...helloView, elements: [helloNote] }, COMPLEX_GATEWAY_VIEW]);
    const without = await inbox('--json', 'model', 'check', SAY_HELLO, at('complex-gateway.bpmn'));
    expect(without.code).toBe(1);
    expect(without.json()).toEqual([helloView, COMPLEX_GATEWAY_VIEW]);
    expect((without.json() as Record<string, unknown>[]).map((view) => Object.keys(view))).toEqual([
      ['file', 'ok', 'processKey', 'elementId', 'elementKind', 'message'],
      ['file', 'ok', 'processKey', 'elementId', 'elementKind', 'message'],
    ]);
  });
});
