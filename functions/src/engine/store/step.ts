import type { Transition } from '../state';

/**
 * A change to make next in the unit of work, computed when its turn comes
 * from the state as it stands then (never from a state read earlier, which
 * another change of the unit may have moved on since): a transition to
 * apply, further steps, or null when there is nothing to do any more (the
 * token it would move has moved on, the child it would start exists).
 */
export type Step = () => Promise<Transition | readonly Step[] | null>;
