import { freshFirestores } from '../support/firestore';
import { HOSTILE_MAX_BODY_BYTES, hostileSuite } from '../support/hostile/suite';
import { testDeadLetterReceiver } from '../support/receiver';

/**
 * receiveDeadLetter against ≥ 10,000 generated hostile requests, the same
 * classes as the receiver's run plus Pub/Sub's dead-letter source attributes
 * (missing, odd, extra ones under the prefix). Every well-formed envelope
 * must end PARKED / DEAD_LETTERED. A project of its own.
 */
const db = freshFirestores()('hostile-dead-letter');
const receiver = testDeadLetterReceiver(db, { maxBodyBytes: HOSTILE_MAX_BODY_BYTES });

describe('receiveDeadLetter under hostile input', () => {
  hostileSuite('deadLetter', db, receiver);
});
