import { parseProcessModel } from '../../functions/src/bpmn/parse-model';
import { startSchedule } from '../../functions/src/bpmn/timer';
import { bpmnDocument, chain, element } from '../support/bpmn-xml';

const now = new Date('2026-12-06T08:00:00Z');
const HOUR = 3_600_000;

describe('the schedule of a timer start event', () => {
  test.each([
    [
      'timeDate: once',
      'timeDate',
      '2027-01-01T06:00:00Z',
      { firstAt: new Date('2027-01-01T06:00:00Z'), intervalMs: null, repetitions: 1 },
    ],
    [
      'R/PT1H: hourly for ever, from an hour on',
      'timeCycle',
      'R/PT1H',
      { firstAt: new Date(now.getTime() + HOUR), intervalMs: HOUR, repetitions: null },
    ],
    [
      'R3/P1D: three days',
      'timeCycle',
      'R3/P1D',
      { firstAt: new Date(now.getTime() + 24 * HOUR), intervalMs: 24 * HOUR, repetitions: 3 },
    ],
  ] as const)('%s', (_name, type, text, expected) => {
    expect(startSchedule(type, text, now)).toEqual({ ok: true, value: expected });
  });

  test.each([
    ['timeDuration', 'PT1H', 'a timeDuration on a start event ("PT1H") says no when'],
    ['timeCycle', '0 0 * * *', 'is no bounded cycle'],
    ['timeCycle', 'R/P1M', 'years or months'],
    ['timeDate', 'tomorrow', 'tomorrow'],
  ] as const)('%s %s is refused', (type, text, message) => {
    const parsed = startSchedule(type, text, now);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? '' : parsed.error).toContain(message);
  });
});

describe('parsing timer start events', () => {
  const model = (definition: string) =>
    parseProcessModel(
      bpmnDocument(
        element('startEvent', 'tick', '', `<bpmn:timerEventDefinition>${definition}</bpmn:timerEventDefinition>`) +
          element('endEvent', 'end') +
          chain('tick', 'end'),
      ),
    );
  test('a cycle loads as a timer start, the process has no none start event', async () => {
    const m = await model('<bpmn:timeCycle>R/P1D</bpmn:timeCycle>');
    expect(m.nodes['tick']).toMatchObject({ kind: 'timerStartEvent', timer: { type: 'timeCycle', value: 'R/P1D' } });
    expect(m.startEventId).toBeNull();
  });
  test.each([
    ['<bpmn:timeCycle>${every}</bpmn:timeCycle>', 'no instance has variables before it starts'],
    ['<bpmn:timeDuration>PT1H</bpmn:timeDuration>', 'says no when'],
  ])('%s is refused', async (definition, message) => {
    await expect(model(definition)).rejects.toThrow(message);
  });
});
