import { normalisedReason } from '../../bench/model-corpus';

/** `npm run bench:models` groups refusals by reason: what names one model is taken out, what says what is wrong stays. */
const reason = (message: string, elementId: string | null = null, elementKind: string | null = null): string =>
  normalisedReason({ message, elementId, elementKind });

test.each([
  [
    'unsupported element userTask; supported are: startEvent (none), …',
    'Task_1',
    'userTask',
    'unsupported element userTask',
  ],
  ['unsupported element userTask; supported are: …', 'userTask', 'userTask', 'unsupported element userTask'],
  [
    'dangling flow: sourceRef "Gateway_7" names no element',
    'Flow_3',
    'sequenceFlow',
    'dangling flow: sourceRef … names no element',
  ],
  [
    'unresolved reference <process_1> (the model must read without warnings)',
    'p',
    'participant',
    'unresolved reference … (the model must read without warnings)',
  ],
  ['messageRef Msg_2 is a signal, not a message', 'wait', 'receiveTask', 'messageRef … is a signal, not a message'],
  [
    '2 executable processes (a, b): a file must hold exactly one',
    null,
    null,
    'N executable processes (…): a file must hold exactly one',
  ],
  [
    'no executable process: mark exactly one bpmn:process isExecutable="true"',
    null,
    null,
    'no executable process: mark exactly one bpmn:process isExecutable="true"',
  ],
  [
    'a start event has no incoming sequence flows (start_1)',
    'start_1',
    'startEvent',
    'a start event has no incoming sequence flows (…)',
  ],
])('%j', (message, elementId, elementKind, expected) => {
  expect(reason(message, elementId, elementKind)).toBe(expected);
});
