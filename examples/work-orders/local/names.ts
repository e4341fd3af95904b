/**
 * The work-order example's names as its tooling (demo, chaos, load,
 * benchmarks, tests) reads them: from the app's own declaration, so they
 * are the names the local stack and a deployment create.
 */
import { registryOf } from '../../../functions/src/apps/load-app';
import { topologyOf } from '../../../functions/src/apps/topology';
import type { MessageRegistry } from '../../../functions/src/receiver/registry';
import { subscriptionOf, topicOf } from '../../../tools/local/peers';
import workOrders from '../index';
import { PROVIDER_TOPIC } from '../steps';

export { ESCALATIONS, escalationRef, INVOICES, invoiceRef, PROVIDER_TOPIC } from '../steps';

/** The example's folder: what its tooling passes as the app (INBOX_APP) to the stack and the CLI, whatever the caller's INBOX_APP. */
export const WORK_ORDERS_APP = 'examples/work-orders';

/** The example's message types, as the receiver reads them. */
export const WORK_ORDER_REGISTRY: MessageRegistry = registryOf(workOrders);

/** Its topics and subscriptions (functions/src/apps/topology.ts). */
export const TOPOLOGY = topologyOf(workOrders);

/** Its topics by role. */
export const TOPICS = {
  completions: topicOf(TOPOLOGY, 'WorkOrderCompleted'),
  releases: topicOf(TOPOLOGY, 'WorkOrderReleased'),
  deadLetter: TOPOLOGY.deadLetter.topic,
  provider: PROVIDER_TOPIC,
} as const;

/** The full name of the completions' push subscription on `projectId`: part of the inbox id of an unreadable completion. */
export const completionSubscription = (projectId: string): string =>
  subscriptionOf(TOPOLOGY, projectId, 'WorkOrderCompleted');
