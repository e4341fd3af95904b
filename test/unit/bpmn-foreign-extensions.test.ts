import { parseProcessModel } from '../../functions/src/bpmn/parse-model';
import { ModelError, type ProcessModel } from '../../functions/src/bpmn/model';

/**
 * Models drawn for other engines (bpmn/check-extensions.ts): what changes
 * how a model runs is refused in one line naming the element, the attribute
 * or element as written, the engine and what to write instead; the async
 * flags become async steps or save points; metadata and colours are ignored
 * on purpose. And the document itself (bpmn/check-document.ts): not UTF-8,
 * a DOCTYPE; and conditions too long or in another language.
 */

const NAMESPACES = [
  'xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"',
  'xmlns:bpmndi="http://www.omg.org/spec/BPMN/20100524/DI"',
  'xmlns:dc="http://www.omg.org/spec/DD/20100524/DC"',
  'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"',
  'xmlns:inbox="https://github.com/transactional-inbox/bpmn"',
  'xmlns:zeebe="http://camunda.org/schema/zeebe/1.0"',
  'xmlns:camunda="http://camunda.org/schema/1.0/bpmn"',
  'xmlns:flowable="http://flowable.org/bpmn"',
  'xmlns:activiti="http://activiti.org/bpmn"',
  'xmlns:modeler="http://camunda.org/schema/modeler/1.0"',
  'xmlns:bioc="http://bpmn.io/schema/bpmn/biocolor/1.0"',
  'xmlns:color="http://www.omg.org/spec/BPMN/non-normative/color/1.0"',
].join(' ');

/** A definitions document around the body of process `p` (with `processAttributes`), and `diagram` after it. */
function document(
  process: string,
  { definitions = '', processAttributes = '', diagram = '', head = '<?xml version="1.0" encoding="UTF-8"?>' } = {},
): string {
  return `${head}
<bpmn:definitions ${NAMESPACES} ${definitions} id="d" targetNamespace="urn:test">
  <bpmn:process id="p" isExecutable="true" ${processAttributes}>${process}</bpmn:process>${diagram}
</bpmn:definitions>`;
}
const flow = (id: string, source: string, target: string, condition = ''): string =>
  condition === ''
    ? `<bpmn:sequenceFlow id="${id}" sourceRef="${source}" targetRef="${target}" />`
    : `<bpmn:sequenceFlow id="${id}" sourceRef="${source}" targetRef="${target}">${condition}</bpmn:sequenceFlow>`;
/** start → `middle` (whose id is `t`) → end. */
const around = (middle: string): string =>
  '<bpmn:startEvent id="start" /><bpmn:endEvent id="end" />' +
  middle +
  flow('f1', 'start', 't') +
  flow('f2', 't', 'end');
const serviceTask = (attributes: string, extensions = ''): string =>
  extensions === ''
    ? `<bpmn:serviceTask id="t" ${attributes} />`
    : `<bpmn:serviceTask id="t" ${attributes}><bpmn:extensionElements>${extensions}</bpmn:extensionElements></bpmn:serviceTask>`;
const userTask = (attributes: string): string => `<bpmn:userTask id="t" ${attributes} />`;

const load = (process: string, options?: Parameters<typeof document>[1]): Promise<ProcessModel> =>
  parseProcessModel(document(process, options));
/** The refusal `promise` ends with; fails the test when it loads. */
async function refusal(promise: Promise<unknown>): Promise<ModelError> {
  const error: unknown = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof ModelError)) throw new Error(`expected a ModelError, got ${String(error)}`);
  return error;
}

describe("other engines' extensions that change how a model runs: refused", () => {
  test.each<[string, string, string, string, string]>([
    [
      'camunda:class',
      serviceTask('camunda:class="com.acme.Ship"'),
      'attribute camunda:class on serviceTask',
      'Camunda 7',
      'zeebe:taskDefinition type',
    ],
    [
      'camunda:delegateExpression',
      serviceTask('camunda:delegateExpression="${ship}"'),
      'attribute camunda:delegateExpression on serviceTask',
      'Camunda 7',
      'zeebe:taskDefinition type',
    ],
    [
      'camunda:assignee',
      userTask('camunda:assignee="ann"'),
      'attribute camunda:assignee on userTask',
      'Camunda 7',
      'zeebe:assignmentDefinition assignee',
    ],
    [
      'camunda:inputOutput',
      serviceTask(
        'inbox:async="true"',
        '<camunda:inputOutput><camunda:inputParameter name="a">1</camunda:inputParameter></camunda:inputOutput>',
      ),
      'extension element camunda:inputOutput',
      'Camunda 7',
      'use zeebe:ioMapping',
    ],
    [
      'camunda:executionListener',
      serviceTask('inbox:async="true"', '<camunda:executionListener class="com.acme.Audit" event="start" />'),
      'extension element camunda:executionListener',
      'Camunda 7',
      'do the work in a task with a handler',
    ],
    [
      'camunda:failedJobRetryTimeCycle',
      serviceTask('inbox:async="true"', '<camunda:failedJobRetryTimeCycle>R5/PT5M</camunda:failedJobRetryTimeCycle>'),
      'extension element camunda:failedJobRetryTimeCycle',
      'Camunda 7',
      'use zeebe:taskDefinition retries',
    ],
    [
      'flowable:class',
      serviceTask('flowable:class="com.acme.Ship"'),
      'attribute flowable:class on serviceTask',
      'Flowable',
      'zeebe:taskDefinition type',
    ],
    [
      'flowable:assignee',
      userTask('flowable:assignee="ann"'),
      'attribute flowable:assignee on userTask',
      'Flowable',
      'zeebe:assignmentDefinition assignee',
    ],
    [
      'activiti:class',
      serviceTask('activiti:class="com.acme.Ship"'),
      'attribute activiti:class on serviceTask',
      'Activiti',
      'zeebe:taskDefinition type',
    ],
  ])('%s', async (_what, process, written, engine, suggestion) => {
    const error = await refusal(load(around(process)));
    expect(error.elementId).toBe('t');
    expect(error.message).not.toContain('\n');
    expect(error.message.startsWith(`t: ${written} (${engine}) is not run by this engine: `)).toBe(true);
    expect(error.message).toContain(suggestion);
  });
});

describe('async flags: an async step on a task, a save point elsewhere', () => {
  const asStepAndSavePoint = async (flag: string): Promise<void> => {
    expect((await load(around(serviceTask(flag)))).nodes.t).toMatchObject({ kind: 'serviceTask', async: true });
    expect((await load(around(userTask(flag)))).nodes.t).toMatchObject({ kind: 'userTask' });
  };

  test('camunda:asyncBefore="true" on a serviceTask → an async step; on a userTask → loads', async () => {
    await asStepAndSavePoint('camunda:asyncBefore="true"');
  });

  test.each([['camunda:async="true"'], ['flowable:async="true"'], ['activiti:async="true"']])(
    '%s on a serviceTask → an async step; on a userTask → loads',
    async (flag) => {
      await asStepAndSavePoint(flag);
    },
  );

  test('without a flag (or with "false") a serviceTask is synchronous', async () => {
    expect((await load(around(serviceTask('')))).nodes.t).toMatchObject({ async: false });
    expect((await load(around(serviceTask('camunda:asyncBefore="false"')))).nodes.t).toMatchObject({ async: false });
  });
});

describe('ignored on purpose: metadata and colours load', () => {
  const shape = (attributes: string): string =>
    `<bpmndi:BPMNDiagram id="dia"><bpmndi:BPMNPlane id="plane" bpmnElement="p"><bpmndi:BPMNShape id="t_di" bpmnElement="t" ${attributes}><dc:Bounds x="0" y="0" width="100" height="80" /></bpmndi:BPMNShape></bpmndi:BPMNPlane></bpmndi:BPMNDiagram>`;
  test.each<[string, string, Parameters<typeof document>[1]]>([
    ['camunda:historyTimeToLive', around(serviceTask('')), { processAttributes: 'camunda:historyTimeToLive="P180D"' }],
    ['camunda:versionTag', around(serviceTask('')), { processAttributes: 'camunda:versionTag="1.2"' }],
    ['camunda:modelerTemplate', around(serviceTask('camunda:modelerTemplate="com.acme.mail"')), {}],
    ['camunda:exclusive', around(serviceTask('camunda:asyncBefore="true" camunda:exclusive="false"')), {}],
    [
      'the camunda:properties element',
      around(
        serviceTask(
          'inbox:async="true"',
          '<camunda:properties><camunda:property name="team" value="billing" /></camunda:properties>',
        ),
      ),
      {},
    ],
    ['zeebe:modelerTemplate', around(serviceTask('zeebe:modelerTemplate="io.camunda.connectors.HttpJson.v2"')), {}],
    [
      'modeler:executionPlatform',
      around(serviceTask('')),
      { definitions: 'modeler:executionPlatform="Camunda Cloud" modeler:executionPlatformVersion="8.5.0"' },
    ],
    [
      'bioc:stroke on a BPMNShape',
      around(serviceTask('')),
      { diagram: shape('bioc:stroke="#e53935" bioc:fill="#ffcdd2"') },
    ],
    [
      'color:background-color on a BPMNShape',
      around(serviceTask('')),
      { diagram: shape('color:background-color="#ffcdd2" color:border-color="#e53935"') },
    ],
  ])('%s', async (_what, process, options) => {
    const model = await load(process, options);
    expect(model.nodes.t).toMatchObject({ kind: 'serviceTask' });
  });
});

describe('the document: refused before BPMN starts', () => {
  const plain = document(around(serviceTask('')));

  test('a declared encoding other than UTF-8', async () => {
    const latin = plain.replace('encoding="UTF-8"', 'encoding="ISO-8859-1"');
    await expect(parseProcessModel(latin)).rejects.toThrow(/^the file declares encoding ISO-8859-1: save it as UTF-8$/);
  });

  test('a replacement character (bytes that were not UTF-8) in the text, with its line', async () => {
    const broken = plain.replace('<bpmn:serviceTask id="t" ', '<bpmn:serviceTask id="t" name="Stra\uFFFDe" ');
    await expect(parseProcessModel(broken)).rejects.toThrow(
      /^the file is not valid UTF-8 \(line \d+\): save it as UTF-8$/,
    );
  });

  test('UTF-16 read as UTF-8 (NUL bytes)', async () => {
    const utf16 = Buffer.from(plain, 'utf16le').toString('utf8');
    await expect(parseProcessModel(utf16)).rejects.toThrow(/UTF-16.*save it as UTF-8/);
  });

  test('a DOCTYPE', async () => {
    const withDoctype = plain.replace('?>', '?>\n<!DOCTYPE definitions [<!ENTITY x "y">]>');
    await expect(parseProcessModel(withDoctype)).rejects.toThrow(/DOCTYPE.*remove it/);
  });

  test('a BPMNShape naming a missing element: ignored, the model loads', async () => {
    const diagram =
      '<bpmndi:BPMNDiagram id="dia"><bpmndi:BPMNPlane id="plane" bpmnElement="p"><bpmndi:BPMNShape id="gone_di" bpmnElement="gone"><dc:Bounds x="0" y="0" width="100" height="80" /></bpmndi:BPMNShape></bpmndi:BPMNPlane></bpmndi:BPMNDiagram>';
    const model = await load(around(serviceTask('')), { diagram });
    expect(Object.keys(model.nodes).sort()).toEqual(['end', 'start', 't']);
  });
});

describe('conditions: too long, or in another language', () => {
  const gateway = (condition: string): string =>
    '<bpmn:startEvent id="start" /><bpmn:exclusiveGateway id="g" default="f3" /><bpmn:endEvent id="a" /><bpmn:endEvent id="b" />' +
    flow('f1', 'start', 'g') +
    flow('f2', 'g', 'a', condition) +
    flow('f3', 'g', 'b');
  const expression = (body: string, attributes = ''): string =>
    `<bpmn:conditionExpression xsi:type="bpmn:tFormalExpression" ${attributes}>${body}</bpmn:conditionExpression>`;
  /** `x == 1 &amp;&amp; x == 1 …` (XML-escaped), `length` characters once read. */
  const long = (length: number, tail = ''): string => {
    const part = 'x == 1 && ';
    const text = part.repeat(Math.ceil(length / part.length)).slice(0, length - tail.length - 6) + 'x == 1' + tail;
    return text.replace(/&/g, '&amp;');
  };

  test.each([
    ['in the own language', ''],
    ['in FEEL', '='],
  ])('5000 characters %s: refused, the message short', async (_what, prefix) => {
    const error = await refusal(load(gateway(expression(prefix + long(5000)))));
    expect(error.elementId).toBe('f2');
    expect(error.message.length).toBeLessThan(400);
  });

  test('a long condition with a mistake at its end: the message quotes at most 200 characters of it', async () => {
    const error = await refusal(load(gateway(expression(long(1000, ' @')))));
    expect(error.message.length).toBeLessThan(400);
    const quoted = /"([^"]*)"/.exec(error.message)?.[1] ?? '';
    expect(quoted.length).toBeGreaterThan(0);
    expect(quoted.length).toBeLessThanOrEqual(200);
    expect(error.message).toMatch(/^f2: invalid condition "x == 1 && .*…": unexpected character "@" at position 1000$/);
  });

  test('language="javascript": refused naming the language', async () => {
    await expect(load(gateway(expression('x == 1', 'language="javascript"')))).rejects.toThrow(
      /^f2: a condition in language "javascript": write it in FEEL/,
    );
  });

  test('language="feel" is FEEL: loads', async () => {
    const model = await load(gateway(expression('=x = 1', 'language="feel"')));
    expect(model.flows.f2?.condition).toEqual({ kind: 'feel', expression: 'x = 1' });
  });
});
