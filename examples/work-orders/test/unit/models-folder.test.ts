import { join } from 'node:path';
import { checkApp } from '../../../../functions/src/apps/check-app';
import { packageRoot } from '../../../../functions/src/apps/load-app';

/**
 * The default app keeps its code here and its model in the repository's
 * top-level bpmn/ (its definition's `models: '../../bpmn'`): the app check
 * a build, a start and `inbox app` run finds the model there.
 */
test("the work-order app's models are the top-level bpmn/", async () => {
  const checked = await checkApp({ app: 'examples/work-orders', bpmnDir: null });
  expect(checked.modelsDir).toBe(join(packageRoot(), 'bpmn'));
  expect(checked.engine.processKeys).toEqual(['work-order-execution']);
});
