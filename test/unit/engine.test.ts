import { join } from 'node:path';
import { loadProcessModel } from '../../functions/src/engine/deployed';
import { Engine } from '../../functions/src/engine/engine';
import { ModelError, type ProcessModel } from '../../functions/src/bpmn/model';

const REPO = join(__dirname, '..', '..');
let fixtureProcess: ProcessModel;
let rounds: ProcessModel;

beforeAll(async () => {
  fixtureProcess = await loadProcessModel(join(REPO, 'test', 'fixtures', 'app', 'bpmn', 'fixture-process.bpmn'));
  // rounds.bpmn has a synchronous task (countRound) and no async one.
  rounds = await loadProcessModel(join(REPO, 'test', 'fixtures', 'bpmn', 'rounds.bpmn'));
});

/** The error `build` throws; fails the test when it throws nothing. */
function errorOf(build: () => unknown): unknown {
  try {
    build();
  } catch (err) {
    return err;
  }
  throw new Error('expected the engine to refuse the models');
}

describe('Engine: handlers are registered by task id and checked at start-up', () => {
  test('all handlers registered: the models are deployed by process key', () => {
    const engine = new Engine([fixtureProcess], {}, new Set(['handOver', 'settle', 'escalate']));
    expect(engine.processKeys).toEqual(['fixture-process']);
    expect(engine.model('fixture-process')).toBe(fixtureProcess);
  });

  test('an async task without a handler: ModelError naming the task id', () => {
    const err = errorOf(() => new Engine([fixtureProcess], {}, new Set(['handOver', 'escalate'])));
    expect(err).toBeInstanceOf(ModelError);
    expect(err).toMatchObject({ elementId: 'settle' });
    expect((err as Error).message).toBe('settle: no async handler is registered for this task');
  });

  test('a handler registered under the other kind does not count: a sync handler for an async task is refused', () => {
    const handOver = (): Record<string, unknown> => ({});
    const err = errorOf(() => new Engine([fixtureProcess], { handOver: handOver, settle: handOver }, new Set()));
    expect(err).toBeInstanceOf(ModelError);
    expect((err as Error).message).toContain('handOver');
    expect((err as Error).message).toContain('async handler');
  });

  test('a synchronous task without a handler: ModelError naming the task id', () => {
    const err = errorOf(() => new Engine([rounds], {}, new Set()));
    expect(err).toBeInstanceOf(ModelError);
    expect(err).toMatchObject({ elementId: 'countRound' });
    expect((err as Error).message).toBe('countRound: no synchronous handler is registered for this task');
  });

  test('two models with the same process key: ModelError naming the key', () => {
    const err = errorOf(
      () =>
        new Engine(
          [fixtureProcess, { ...fixtureProcess, version: 'other' }],
          {},
          new Set(['handOver', 'settle', 'escalate']),
        ),
    );
    expect(err).toBeInstanceOf(ModelError);
    expect(err).toMatchObject({ elementId: 'fixture-process' });
    expect((err as Error).message).toBe('fixture-process: two models define process fixture-process');
  });

  test('an unknown process key: ModelError naming the key', () => {
    const engine = new Engine([fixtureProcess], {}, new Set(['handOver', 'settle', 'escalate']));
    expect(engine.find('nope')).toBeNull();
    expect(() => engine.model('nope')).toThrow(new ModelError('process nope is not deployed', 'nope'));
  });
});
