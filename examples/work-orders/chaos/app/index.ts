import { defineApp } from '../../../../functions/src/app';
import workOrders from '../../index';
import { workOrderSteps } from '../../steps';
import { DEFECTS, inspectionSteps } from './inspection';

/**
 * The app `npm run test:chaos` runs (INBOX_APP=examples/work-orders/chaos/app):
 * the work-order example's messages, topics and steps, with the chaos
 * models (../bpmn: the work order in four tranches with a racing deadline,
 * and the one with a parallel fork, an inspection that goes round an error
 * boundary loop once per finding, an approval by a person and a
 * multi-instance approval with a completion condition) and that model's
 * three steps. Its
 * topics and subscriptions are the example's, so the run's tooling reads
 * them from examples/work-orders/local/names.ts.
 */
export default defineApp({
  name: 'work-orders-chaos',
  models: '../bpmn',
  messages: workOrders.messages,
  steps: (ctx) => ({ ...workOrderSteps(ctx), ...inspectionSteps(ctx) }),
  publishes: workOrders.publishes,
  collections: [...workOrders.collections, DEFECTS],
  deadLetterTopic: workOrders.deadLetterTopic,
});
