package io.tidemark.postgres.outbox;

import io.tidemark.postgres.CaptureShape;
import io.tidemark.testing.TestDatabase;

/** Every test of {@link WakeUpTest} on an outbox of keys ({@link CaptureShape#KEYS}). */
class KeysWakeUpTest extends WakeUpTest {

    KeysWakeUpTest(TestDatabase database) {
        super(database);
    }

    @Override
    CaptureShape shape() {
        return CaptureShape.KEYS;
    }
}
