import { join } from 'node:path';
import { loadProcessModel } from '../../functions/src/engine/deployed';
import { Engine } from '../../functions/src/engine/engine';
import { ModelError, type ProcessModel } from '../../functions/src/bpmn/model';

const REPO = join(__dirname, '..', '..');
let workOrder: ProcessModel;
let rounds: ProcessModel;

beforeAll(async () => {
  workOrder = await loadProcessModel(join(REPO, 'bpmn', 'work-order-execution.bpmn'));
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
    const engine = new Engine([workOrder], {}, new Set(['handOverWorkOrder', 'createInvoice', 'escalateOverdueWorkOrder']));
    expect(engine.processKeys).toEqual(['work-order-execution']);
    expect(engine.model('work-order-execution')).toBe(workOrder);
  });

  test('an async task without a handler: ModelError naming the task id', () => {
    const err = errorOf(() => new Engine([workOrder], {}, new Set(['handOverWorkOrder', 'escalateOverdueWorkOrder'])));
    expect(err).toBeInstanceOf(ModelError);
    expect(err).toMatchObject({ elementId: 'createInvoice' });
    expect((err as Error).message).toBe('createInvoice: no async handler is registered for this task');
  });

  test('a handler registered under the other kind does not count: a sync handler for an async task is refused', () => {
    const handOver = (): Record<string, unknown> => ({});
    const err = errorOf(() => new Engine([workOrder], { handOverWorkOrder: handOver, createInvoice: handOver }, new Set()));
    expect(err).toBeInstanceOf(ModelError);
    expect((err as Error).message).toContain('handOverWorkOrder');
    expect((err as Error).message).toContain('async handler');
  });

  test('a synchronous task without a handler: ModelError naming the task id', () => {
    const err = errorOf(() => new Engine([rounds], {}, new Set()));
    expect(err).toBeInstanceOf(ModelError);
    expect(err).toMatchObject({ elementId: 'countRound' });
    expect((err as Error).message).toBe('countRound: no synchronous handler is registered for this task');
  });

  test('two models with the same process key: ModelError naming the key', () => {
    const err = errorOf(() => new Engine([workOrder, { ...workOrder, version: 'other' }], {}, new Set(['handOverWorkOrder', 'createInvoice', 'escalateOverdueWorkOrder'])));
    expect(err).toBeInstanceOf(ModelError);
    expect(err).toMatchObject({ elementId: 'work-order-execution' });
    expect((err as Error).message).toBe('work-order-execution: two models define process work-order-execution');
  });

  test('an unknown process key: ModelError naming the key', () => {
    const engine = new Engine([workOrder], {}, new Set(['handOverWorkOrder', 'createInvoice', 'escalateOverdueWorkOrder']));
    expect(engine.find('nope')).toBeNull();
    expect(() => engine.model('nope')).toThrow(new ModelError('process nope is not deployed', 'nope'));
  });
});
