import type { Firestore } from '@google-cloud/firestore';
import { timerFailed, timerIsLive } from '../timer-transitions';
import { applyTransition, loadExecution, loadInstance, loadTokens } from './apply';
import { refs } from './collections';
import { asTimer } from './timers';
import { runUnitOfWork } from './unit-of-work';

/** What recording a failed firing found: recorded (the incident and the timer's deletion), or nothing to record any more. */
export type TimerFailure = 'RECORDED' | 'NOT_FOUND' | 'NOT_PENDING' | 'STALE';

/**
 * A due timer whose firing cannot be applied (fireTimerRun threw a
 * StepFailedError, `error`): in one transaction, the timer is deleted and
 * its instance gets a STEP_FAILED incident (timer-transitions.ts,
 * timerFailed), so neither Cloud Tasks nor the timer sweep fires it again.
 * A timer fired, deleted or left behind meanwhile records nothing.
 */
export async function failTimerRun(
  db: Firestore,
  timerIdValue: string,
  error: string,
  now: Date,
): Promise<TimerFailure> {
  const run = await runUnitOfWork(db, async (uow): Promise<TimerFailure> => {
    const ref = refs.timer(db, timerIdValue);
    const data = await uow.get(ref);
    if (data === undefined) return 'NOT_FOUND';
    const timer = asTimer(data);
    if (timer.status !== 'PENDING') return 'NOT_PENDING';
    const instance = await loadInstance(uow, timer.processInstanceId);
    const execution = await loadExecution(uow, timer.processInstanceId, timer.executionId);
    if (instance === null || execution === null || !timerIsLive(execution, timer)) {
      uow.delete(ref);
      return 'STALE';
    }
    const tokens = await loadTokens(uow, instance.id);
    await applyTransition(uow, timerFailed({ instance, execution, timer, tokens }, error, now), now);
    return 'RECORDED';
  });
  return run.result;
}
