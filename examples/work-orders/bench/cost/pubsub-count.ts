/**
 * Pub/Sub publishes as they cross a pass-through gRPC tap in front of the
 * emulator (the functions' and the simulated provider's line): messages and
 * their billable size per topic. Pub/Sub bills a message as its data, its
 * attributes' keys and values, 20 bytes of timestamp and its message id, and
 * at least 1,000 bytes per publish, push or pull request.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as protobuf from 'protobufjs';
import { startGrpcTap } from '../../../../tools/faults/grpc-tap';

/** Publishes to one topic. */
export interface TopicCounts {
  requests: number;
  messages: number;
  /** Sum of the messages' billable sizes. */
  bytes: number;
  /** Sum over requests of max(1000, the request's bytes). */
  billableBytes: number;
}

export interface PubSubCounter {
  readonly host: string;
  /** By short topic name. */
  counts(): Record<string, TopicCounts>;
  reset(): void;
  close(): Promise<void>;
}

interface WireMessage {
  readonly data?: Uint8Array;
  readonly attributes?: Readonly<Record<string, string>>;
  readonly orderingKey?: string;
}

/** The billable size of one message, given the id Pub/Sub gave it. */
export function messageBytes(m: WireMessage, messageId: string): number {
  const attributes = Object.entries(m.attributes ?? {}).reduce(
    (n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v),
    0,
  );
  return (
    (m.data?.length ?? 0) + attributes + 20 + Buffer.byteLength(messageId) + Buffer.byteLength(m.orderingKey ?? '')
  );
}

export async function startPubSubCounter(target: string): Promise<PubSubCounter> {
  const pkg = require.resolve('@google-cloud/pubsub/package.json');
  const root = protobuf.Root.fromJSON(
    JSON.parse(readFileSync(join(pkg, '..', 'build', 'protos', 'protos.json'), 'utf8')) as protobuf.INamespace,
  );
  const request = root.lookupType('google.pubsub.v1.PublishRequest');
  const response = root.lookupType('google.pubsub.v1.PublishResponse');
  let topics: Record<string, TopicCounts> = {};
  const tap = await startGrpcTap(target, (call) => {
    if (call.method !== 'Publish' || call.status !== 0 || call.requests[0] === undefined) return;
    const req = request.toObject(request.decode(call.requests[0])) as { topic?: string; messages?: WireMessage[] };
    const ids =
      call.responses[0] === undefined
        ? []
        : ((response.toObject(response.decode(call.responses[0])) as { messageIds?: string[] }).messageIds ?? []);
    const topic = (req.topic ?? '').split('/').pop() ?? '';
    const t = (topics[topic] ??= { requests: 0, messages: 0, bytes: 0, billableBytes: 0 });
    const bytes = (req.messages ?? []).reduce((n, m, i) => n + messageBytes(m, ids[i] ?? ''), 0);
    t.requests += 1;
    t.messages += req.messages?.length ?? 0;
    t.bytes += bytes;
    t.billableBytes += Math.max(1000, bytes);
  });
  return {
    host: tap.host,
    counts: () => structuredClone(topics),
    reset: () => {
      topics = {};
    },
    close: () => tap.close(),
  };
}
