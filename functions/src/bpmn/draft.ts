/** The parser's working shapes of flow nodes, shared by the graph rules (check-graph.ts, check-events.ts). */
import type { FlowNode } from './model';

type WithoutFlows<T> = T extends unknown ? Omit<T, 'incoming' | 'outgoing'> : never;
/** A flow node as read from the XML, before its flows are known. */
export type NodeDraft = WithoutFlows<FlowNode>;
/** A flow node whose flow lists are still being filled, in document order. */
export type Draft = NodeDraft & { readonly incoming: string[]; readonly outgoing: string[] };
