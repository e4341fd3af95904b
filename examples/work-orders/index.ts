import { defineApp } from '../../functions/src/app';
import { WorkOrderCompletedType, WorkOrderReleasedType } from './messages';
import { ESCALATIONS, INVOICES, PROVIDER_TOPIC, workOrderSteps } from './steps';

/**
 * The work-order example, the process of the article this project follows
 * (README): planning releases a work order (WorkOrderReleased starts it, or
 * startProcess), "Hand over work order" publishes it to the provider, the
 * token waits for WorkOrderCompleted (with a completion deadline that
 * escalates), and "Create invoice" bills it once. Its topic and
 * subscription names are those of the deployments from before apps, so an
 * upgrade keeps them. It is the repository's default app (INBOX_APP's
 * default), so its model lives in the repository's top-level bpmn/, the
 * models this repository deploys by default; its code stays here.
 */
export default defineApp({
  name: 'work-orders',
  // The repository's top-level bpmn/ (relative to this folder): the models the repository deploys by default.
  models: '../../bpmn',
  messages: [WorkOrderCompletedType, WorkOrderReleasedType],
  steps: workOrderSteps,
  publishes: [PROVIDER_TOPIC],
  collections: [INVOICES, ESCALATIONS],
  deadLetterTopic: 'work-order-completed-dlt',
});
