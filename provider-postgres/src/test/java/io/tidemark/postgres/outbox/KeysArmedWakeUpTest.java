package io.tidemark.postgres.outbox;

import io.tidemark.postgres.CaptureShape;
import io.tidemark.testing.TestDatabase;

/** Every test of {@link ArmedWakeUpTest} on an outbox of keys ({@link CaptureShape#KEYS}). */
class KeysArmedWakeUpTest extends ArmedWakeUpTest {

    KeysArmedWakeUpTest(TestDatabase database) {
        super(database);
    }

    @Override
    CaptureShape shape() {
        return CaptureShape.KEYS;
    }
}
