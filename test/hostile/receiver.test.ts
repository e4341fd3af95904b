import { freshFirestores } from '../support/firestore';
import { HOSTILE_MAX_BODY_BYTES, hostileSuite } from '../support/hostile/suite';
import { testReceiver } from '../support/receiver';

/**
 * receivePubSubPush against ≥ 10,000 generated hostile requests (see
 * test/support/hostile/cases.ts for the classes and their counts). A project
 * of its own, so the inbox holds exactly what this run stored.
 */
const db = freshFirestores()('hostile-receiver');
const receiver = testReceiver(db, { maxBodyBytes: HOSTILE_MAX_BODY_BYTES });

describe('receivePubSubPush under hostile input', () => {
  hostileSuite('receiver', db, receiver);
});
