/**
 * The steps the system runs for an app's own messages: each element that
 * publishes a message the app's `sends` declares (a message throw or end
 * event, a send task with a messageRef) gets a handler that publishes it,
 * keyed by its process and its id (bpmn/model.ts's publishStepKey): element
 * ids are unique only within a model, and two models may each have an
 * `EndEvent_1` publishing a different message. It runs as any step's job
 * does (runJob, after the commit that reached the element, retried by Cloud
 * Tasks), so a retry may publish again: `inboxMessageId` (the job's id, the
 * same on every retry), an attribute and a field of the body, is what a
 * receiver deduplicates on.
 */
import { modelKeyOf } from '../bpmn/item-body';
import { publishedMessage, publishStepKey, type ProcessModel } from '../bpmn/model';
import type { AsyncHandler } from './handlers';

/** The attribute and body field a published message carries its job's id in: the same on every retry of the publish. */
export const MESSAGE_ID_ATTRIBUTE = 'inboxMessageId';

/** A message the app's models publish (app.ts's AppSend, its defaults filled in). */
export interface SentMessage {
  readonly name: string;
  readonly topic: string;
  readonly nameAttribute: string;
  readonly payload?: (variables: Readonly<Record<string, unknown>>) => Readonly<Record<string, unknown>>;
}

/** Publishes `data` with `attributes` to `topic`; returns the message id. */
export type Publish = (topic: string, data: Buffer, attributes: Readonly<Record<string, string>>) => Promise<string>;

/** The publishing handlers, by {@link publishStepKey} (process and element), for the elements whose message `sends` declares. */
export function publishSteps(
  models: readonly ProcessModel[],
  app: { readonly sends: readonly SentMessage[] },
  publish: Publish = () => Promise.reject(new Error('no publisher: these handlers only list the publishing elements')),
): Record<string, AsyncHandler> {
  const steps: Record<string, AsyncHandler> = {};
  for (const model of models) {
    for (const node of Object.values(model.nodes)) {
      const name = publishedMessage(node);
      const send = name === null ? undefined : app.sends.find((m) => m.name === name);
      if (send === undefined) continue;
      steps[publishStepKey(model.key, node.id)] = async ({ job, instance }) => {
        const body = send.payload === undefined ? instance.variables : send.payload(instance.variables);
        // In the body too: a receiving inbox's dedupKey reads the payload.
        await publish(send.topic, Buffer.from(JSON.stringify({ ...body, [MESSAGE_ID_ATTRIBUTE]: job.id })), {
          [send.nameAttribute]: send.name,
          [MESSAGE_ID_ATTRIBUTE]: job.id,
        });
        return {};
      };
    }
  }
  return steps;
}

/**
 * The system's publishing step of element `elementId` in the instance of
 * `processKey` among `handlers`, or undefined. An item of a multi-instance
 * activity runs under `PROCESS#ACTIVITY` (bpmn/item-body.ts): its elements
 * are its caller's model's, and so are their steps.
 */
export function publishStepOf<H>(
  handlers: Readonly<Record<string, H>>,
  processKey: string,
  elementId: string,
): H | undefined {
  const key = publishStepKey(modelKeyOf(processKey), elementId);
  return Object.prototype.hasOwnProperty.call(handlers, key) ? handlers[key] : undefined;
}
