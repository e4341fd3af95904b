import { type EmulatorHandle, startEmulators, type RunningEmulators } from '../emulators/harness';
import { answers } from '../emulators/ready';

export interface EmulatorSession {
  readonly firestoreHost: string;
  readonly pubsubHost: string;
  /** True when this session started them (and stop() will stop them). */
  readonly started: boolean;
  /** The Firestore emulator's process, when this session started it (an outage can restart it). */
  readonly firestore: EmulatorHandle | null;
  stop(): Promise<void>;
}

/**
 * Emulators for a local run: the ones named by FIRESTORE_EMULATOR_HOST and
 * PUBSUB_EMULATOR_HOST when both answer (unless `reuse` is false), otherwise
 * fresh ones from the harness. Exports both variables into this process's
 * environment.
 */
export async function useEmulators(reuse = true): Promise<EmulatorSession> {
  const firestoreHost = process.env.FIRESTORE_EMULATOR_HOST ?? '';
  const pubsubHost = process.env.PUBSUB_EMULATOR_HOST ?? '';
  if (reuse && firestoreHost !== '' && pubsubHost !== '') {
    const [firestoreUp, pubsubUp] = await Promise.all([answers(firestoreHost), answers(pubsubHost)]);
    if (firestoreUp && pubsubUp)
      return { firestoreHost, pubsubHost, started: false, firestore: null, stop: async () => undefined };
  }
  const running: RunningEmulators = await startEmulators();
  const env = {
    FIRESTORE_EMULATOR_HOST: running.env.FIRESTORE_EMULATOR_HOST ?? '',
    PUBSUB_EMULATOR_HOST: running.env.PUBSUB_EMULATOR_HOST ?? '',
  };
  Object.assign(process.env, env);
  return {
    firestoreHost: env.FIRESTORE_EMULATOR_HOST,
    pubsubHost: env.PUBSUB_EMULATOR_HOST,
    started: true,
    firestore: running.firestore ?? null,
    stop: () => running.stop(),
  };
}
