/**
 * jest globalSetup: makes sure a Firestore and a Pub/Sub emulator are
 * reachable for the whole run and exports their hosts through
 * FIRESTORE_EMULATOR_HOST / PUBSUB_EMULATOR_HOST (workers inherit this env).
 *
 * If both variables are already set and both hosts answer (e.g. emulators
 * from `npm run emulators`), they are reused and nothing is started.
 * Otherwise both are started here and stopped by global-teardown.ts.
 *
 * It also bundles the fixture app (test/fixtures/app) into dist/apps/, as
 * `npm run build` bundles the app INBOX_APP names: the functions the tests
 * serve from dist/ and the built CLI run the fixture app.
 */
import { buildApp } from '../../tools/build/build-app';
import { useEmulators, type EmulatorSession } from '../../tools/local/use-emulators';
import { FIXTURE_APP } from '../support/app';

declare global {
  /** Emulators of this jest run; stopped by globalTeardown if this run started them. */
  var __jestEmulators__: EmulatorSession | undefined;
}

export default async function globalSetup(): Promise<void> {
  const started = Date.now();
  // Tests never run on Google Cloud: skip google-auth's metadata-server probe (and its warning).
  process.env.METADATA_SERVER_DETECTION ??= 'none';
  await buildApp(FIXTURE_APP);
  const session = await useEmulators();
  globalThis.__jestEmulators__ = session;
  const hosts = `FIRESTORE_EMULATOR_HOST=${session.firestoreHost} PUBSUB_EMULATOR_HOST=${session.pubsubHost}`;
  console.log(
    session.started ? `\n[emulators] started ${hosts} in ${Date.now() - started} ms` : `\n[emulators] reusing ${hosts}`,
  );
}
