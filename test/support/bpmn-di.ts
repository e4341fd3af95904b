/**
 * Diagram interchange for test models written without it (bpmn-js draws
 * nothing, "no diagram to display", for a process without a BPMNDiagram):
 * a shape per flow node, in document order along a row, and a boundary
 * event on the edge of its host. No edges: the browser tests look for the
 * shapes. The result is another BPMN document, so another version hash.
 */

const NODE = /<bpmn:(\w+) id="([^"]+)"([^>]*)>/g;
const NOT_NODES = new Set(['sequenceFlow', 'message', 'process', 'definitions', 'timerEventDefinition']);

/** `xml` with a BPMNDiagram that places every flow node of the process `processId`. */
export function withDiagram(xml: string, processId: string): string {
  const hosts = new Map<string, number>();
  const shapes: string[] = [];
  let x = 40;
  for (const [, tag = '', id = '', attrs = ''] of xml.matchAll(NODE)) {
    if (NOT_NODES.has(tag)) continue;
    const host = /attachedToRef="([^"]+)"/.exec(attrs)?.[1];
    const event = tag.endsWith('Event');
    const [w, h] = event ? [36, 36] : [100, 80];
    const at = host === undefined ? { x, y: event ? 122 : 100 } : { x: (hosts.get(host) ?? 0) + 60, y: 162 };
    if (host === undefined) {
      hosts.set(id, x);
      x += w + 60;
    }
    shapes.push(
      `<bpmndi:BPMNShape id="${id}_di" bpmnElement="${id}"><dc:Bounds x="${at.x}" y="${at.y}" width="${w}" height="${h}" /></bpmndi:BPMNShape>`,
    );
  }
  const diagram = `<bpmndi:BPMNDiagram id="diagram"><bpmndi:BPMNPlane id="plane" bpmnElement="${processId}">${shapes.join('')}</bpmndi:BPMNPlane></bpmndi:BPMNDiagram>`;
  return xml
    .replace(
      '<bpmn:definitions ',
      '<bpmn:definitions xmlns:bpmndi="http://www.omg.org/spec/BPMN/20100524/DI" xmlns:dc="http://www.omg.org/spec/DD/20100524/DC" ',
    )
    .replace('</bpmn:definitions>', `${diagram}\n</bpmn:definitions>`);
}
