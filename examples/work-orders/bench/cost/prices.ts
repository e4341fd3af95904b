/**
 * The list prices bench:cost prices a work order with: ONE place, with the
 * date they were looked up and where. US dollars, one region: us-west1
 * (Oregon), a Cloud Run Tier 1 region whose Firestore regional price the
 * Firebase pricing page lists. Free tiers are left out on purpose (a price
 * per 1,000 work orders at scale, not a first month's bill). Change a price
 * here and the bench's figures follow.
 */

/** One price with where it came from. */
export interface Price {
  readonly usd: number;
  /** What `usd` buys, in words. */
  readonly per: string;
  readonly source: string;
}

export const PRICES_AS_OF = '2026-12-01';
export const PRICE_REGION = 'us-west1 (Oregon)';

export const PRICES = {
  firestoreRead: {
    usd: 0.03 / 100_000,
    per: 'document read',
    source:
      'https://firebase.google.com/docs/firestore/pricing (pricing by location, Oregon: $0.03 per 100,000 document reads)',
  },
  firestoreWrite: {
    usd: 0.09 / 100_000,
    per: 'document write',
    source: 'https://firebase.google.com/docs/firestore/pricing (Oregon: $0.09 per 100,000 document writes)',
  },
  firestoreDelete: {
    usd: 0.01 / 100_000,
    per: 'document delete',
    source: 'https://firebase.google.com/docs/firestore/pricing (Oregon: $0.01 per 100,000 document deletes)',
  },
  cloudTasksOperation: {
    usd: 0.4 / 1_000_000,
    per: 'billable operation (API call or push delivery attempt, per 32 KB chunk)',
    source: 'https://cloud.google.com/tasks/docs/pricing ($0.40 per million, first million a month free)',
  },
  cloudRunRequest: {
    usd: 0.4 / 1_000_000,
    per: 'request (request-based billing)',
    source:
      'https://cloud.google.com/run/pricing (Tier 1, CPU only allocated during request processing: $0.40 per million requests)',
  },
  cloudRunVcpuSecond: {
    usd: 0.000024,
    per: 'vCPU-second (request-based billing)',
    source: 'https://cloud.google.com/run/pricing (Tier 1: $0.00002400 per vCPU-second)',
  },
  cloudRunGibSecond: {
    usd: 0.0000025,
    per: 'GiB-second (request-based billing)',
    source: 'https://cloud.google.com/run/pricing (Tier 1: $0.00000250 per GiB-second)',
  },
  pubsubByte: {
    usd: 40 / 2 ** 40,
    per: 'byte of publish or delivery throughput (at least 1,000 bytes per request)',
    source:
      'https://cloud.google.com/pubsub/pricing ($40 per TiB; minimum 1000 bytes per publish, push or pull request)',
  },
} as const satisfies Record<string, Price>;

/**
 * Memory of each function as infra/lib/functions.sh deploys it (FN_MEMORY),
 * GiB, and its vCPU (FN_CPU). Cloud Run bills memory for the time an instance
 * serves requests; the bench prices it by the CPU-seconds measured, at one
 * vCPU-second per CPU-second (see docs/cost.md: an estimate, as request time
 * waiting on I/O is billed too).
 */
export const FUNCTION_SIZES = {
  receivePubSubPush: { memoryGib: 1, vcpu: 1 },
  receiveDeadLetter: { memoryGib: 1, vcpu: 1 },
  startProcess: { memoryGib: 0.25, vcpu: 1 },
  runJob: { memoryGib: 0.5, vcpu: 1 },
  fireTimer: { memoryGib: 0.25, vcpu: 1 },
  sweepJobs: { memoryGib: 0.25, vcpu: 0.167 },
  relayInbox: { memoryGib: 0.5, vcpu: 1 },
} as const;
