// placeholder until the operations helpers' branches merge
/* eslint-disable @typescript-eslint/no-unused-vars -- the placeholder's signatures are the contract's */
import type { InstanceRow, InstanceView, OperationsDeps } from './types';

export async function instancesByBusinessKey(_deps: OperationsDeps, _key: string): Promise<InstanceRow[]> {
  return [];
}

export async function readInstance(_deps: OperationsDeps, _id: string): Promise<InstanceView | null> {
  return null;
}
