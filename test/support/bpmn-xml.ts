/** BPMN XML written in tests: a definitions document around one executable process `p`, and its elements. */

/** A definitions document around the body of process `p`, with message `m` named Done. */
export function bpmnDocument(process: string, roots = ''): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:inbox="https://github.com/transactional-inbox/bpmn"
    xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" id="d" targetNamespace="urn:test">
  <bpmn:message id="m" name="Done" />${roots}
  <bpmn:process id="p" isExecutable="true">${process}</bpmn:process>
</bpmn:definitions>`;
}

/** A sequence flow, with a condition when one is given. */
export function sequenceFlow(id: string, source: string, target: string, condition?: string): string {
  const body =
    condition === undefined
      ? ''
      : `<bpmn:conditionExpression xsi:type="bpmn:tFormalExpression">${condition}</bpmn:conditionExpression>`;
  return `<bpmn:sequenceFlow id="${id}" sourceRef="${source}" targetRef="${target}">${body}</bpmn:sequenceFlow>`;
}

/** An element `<bpmn:TAG id=… …/>`. */
export const element = (tag: string, id: string, attributes = '', body = ''): string =>
  body === ''
    ? `<bpmn:${tag} id="${id}" ${attributes} />`
    : `<bpmn:${tag} id="${id}" ${attributes}>${body}</bpmn:${tag}>`;

/** An async service task: a job runs it. */
export const asyncTask = (id: string): string => element('serviceTask', id, 'inbox:async="true"');

/**
 * A chain `a → b → c` of sequence flows named `a-b`, `b-c`; returns the
 * flows' XML. The usual way to write a path in a test model.
 */
export function chain(...ids: string[]): string {
  return ids
    .slice(1)
    .map((id, i) => sequenceFlow(`${ids[i] as string}-${id}`, ids[i] as string, id))
    .join('');
}
