/**
 * The app check of `keepForOlderVersions` (apps/check-models.ts,
 * apps/check-definition.ts): a handler no task names is accepted when it is
 * kept for older versions, and refused otherwise with what to do; a kept key
 * that a task of the models names, or that no handler has, is refused.
 */
import { defineApp } from '../../functions/src/app';
import { modelProblems } from '../../functions/src/apps/check-models';
import { parseProcessModel } from '../../functions/src/bpmn/parse-model';
import type { ProcessModel } from '../../functions/src/bpmn/model';
import { z } from 'zod';

/** start → audit → end: a model whose older version had pay. */
const model = (): Promise<ProcessModel> =>
  parseProcessModel(`<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:inbox="https://github.com/transactional-inbox/bpmn" id="d" targetNamespace="urn:test">
  <bpmn:process id="p" isExecutable="true">
    <bpmn:startEvent id="s" /><bpmn:serviceTask id="audit" inbox:async="true" /><bpmn:endEvent id="e" />
    <bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="audit" /><bpmn:sequenceFlow id="f2" sourceRef="audit" targetRef="e" />
  </bpmn:process>
</bpmn:definitions>`);

const check = async (steps: string[], kept?: string[]): Promise<string[]> =>
  modelProblems([await model()], {
    steps: new Set(steps),
    syncSteps: new Set(),
    messages: new Set(),
    ...(kept === undefined ? {} : { keptForOlderVersions: new Set(kept) }),
  });

test('a handler no task names: refused saying keepForOlderVersions, accepted once listed there', async () => {
  expect(await check(['audit', 'pay'])).toEqual([
    expect.stringMatching(
      /^steps has a handler pay, but no model has an async task .*list pay in keepForOlderVersions$/,
    ),
  ]);
  expect(await check(['audit', 'pay'], ['pay'])).toEqual([]);
});

test('a kept key that a task names, or that no handler has, is refused with what to do', async () => {
  expect(await check(['audit'], ['audit'])).toEqual([
    expect.stringMatching(
      /^keepForOlderVersions lists audit, but a task of the models is run by it: .*remove audit from keepForOlderVersions/,
    ),
  ]);
  expect(await check(['audit'], ['pay'])).toEqual([
    expect.stringMatching(
      /^keepForOlderVersions lists pay, but steps has no handler pay: .*once `inbox versions` shows no running instance/,
    ),
  ]);
});

test('defineApp: keepForOlderVersions is a list of distinct step keys, kept on the app', () => {
  const base = {
    name: 'kept',
    messages: [
      {
        name: 'Go',
        topic: 'go-topic',
        schema: z.object({ k: z.string() }),
        correlationKey: () => 'k',
        dedupKey: () => 'd',
      },
    ],
    steps: () => ({}),
  };
  expect(defineApp(base).keepForOlderVersions).toEqual([]);
  expect(defineApp({ ...base, keepForOlderVersions: ['pay'] }).keepForOlderVersions).toEqual(['pay']);
  expect(() => defineApp({ ...base, keepForOlderVersions: ['pay', 'pay'] })).toThrow(
    /keepForOlderVersions: pay is listed twice/,
  );
  expect(() => defineApp({ ...base, keepForOlderVersions: [' pay'] })).toThrow(/is no step key/);
  expect(() => defineApp({ ...base, keepForOlderVersions: 'pay' as unknown as string[] })).toThrow(
    /keepForOlderVersions: a list of the step keys/,
  );
});
