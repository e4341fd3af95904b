import type { Transition } from '../state';

/**
 * A change to make next in the unit of work, computed when its turn comes
 * from the state as it stands then (never from a state read earlier, which
 * another change of the unit may have moved on since): a transition to
 * apply, further steps, siblings, or null when there is nothing to do any
 * more (the token it would move has moved on, the child it would start
 * exists).
 */
export type Step = () => Promise<Transition | readonly Step[] | Siblings | null>;

/**
 * Steps applied one after the other before anything that follows from any
 * of them: the instances one transition starts at once (a parallel
 * multi-instance activity's items all start before the first one's end is
 * counted, as Camunda 8 activates them all first).
 */
export interface Siblings {
  readonly siblings: readonly Step[];
}
