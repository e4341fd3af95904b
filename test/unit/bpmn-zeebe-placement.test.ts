import { parseProcessModel } from '../../functions/src/bpmn/parse-model';
const doc = (body: string) => `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="urn:t">
  <bpmn:message id="m" name="M" />
  <bpmn:process id="p" isExecutable="true"><bpmn:startEvent id="s" />${body}<bpmn:endEvent id="e" />
  <bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="t" /><bpmn:sequenceFlow id="f2" sourceRef="t" targetRef="e" /></bpmn:process>
</bpmn:definitions>`;
const ext = (x: string) => `<bpmn:extensionElements>${x}</bpmn:extensionElements>`;

/** A zeebe element drawn where nothing reads it refuses the model, naming the element: it is never silently ignored. */
describe('zeebe elements where nothing reads them', () => {
  test.each([
    [
      'a task definition on a user task',
      `<bpmn:userTask id="t">${ext('<zeebe:taskDefinition type="x" />')}</bpmn:userTask>`,
      /^t: zeebe:taskDefinition on a userTask is not read there/,
    ],
    [
      'task headers without a task definition',
      `<bpmn:serviceTask id="t" xmlns:inbox="https://github.com/transactional-inbox/bpmn" inbox:async="true">${ext('<zeebe:taskHeaders><zeebe:header key="a" value="b" /></zeebe:taskHeaders>')}</bpmn:serviceTask>`,
      /^t: zeebe:taskHeaders on a serviceTask is not read there/,
    ],
    [
      'a called element on a service task',
      `<bpmn:serviceTask id="t">${ext('<zeebe:taskDefinition type="x" /><zeebe:calledElement processId="c" />')}</bpmn:serviceTask>`,
      /^t: zeebe:calledElement on a serviceTask is not read there/,
    ],
    [
      'an assignment on a service task',
      `<bpmn:serviceTask id="t">${ext('<zeebe:taskDefinition type="x" /><zeebe:assignmentDefinition assignee="a" />')}</bpmn:serviceTask>`,
      /^t: zeebe:assignmentDefinition on a serviceTask/,
    ],
    [
      'a subscription on a task',
      `<bpmn:serviceTask id="t">${ext('<zeebe:taskDefinition type="x" /><zeebe:subscription correlationKey="=k" />')}</bpmn:serviceTask>`,
      /^t: zeebe:subscription on a serviceTask is not read there: put it in the bpmn:message/,
    ],
  ])('%s is refused', async (_what, body, message) => {
    await expect(parseProcessModel(doc(body))).rejects.toThrow(message);
  });

  test('where they are read, they load: a task definition with headers, a user task with its assignment', async () => {
    await expect(
      parseProcessModel(
        doc(
          `<bpmn:serviceTask id="t">${ext('<zeebe:taskDefinition type="x" /><zeebe:taskHeaders><zeebe:header key="a" value="b" /></zeebe:taskHeaders>')}</bpmn:serviceTask>`,
        ),
      ),
    ).resolves.toBeDefined();
    await expect(
      parseProcessModel(
        doc(
          `<bpmn:userTask id="t">${ext('<zeebe:userTask /><zeebe:assignmentDefinition assignee="a" /><zeebe:formDefinition formKey="f" />')}</bpmn:userTask>`,
        ),
      ),
    ).resolves.toBeDefined();
  });
});
