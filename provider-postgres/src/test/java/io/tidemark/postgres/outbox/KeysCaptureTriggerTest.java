package io.tidemark.postgres.outbox;

import io.tidemark.postgres.CaptureShape;
import io.tidemark.testing.TestDatabase;

/** Every test of {@link CaptureTriggerTest} on an outbox of keys ({@link CaptureShape#KEYS}). */
class KeysCaptureTriggerTest extends CaptureTriggerTest {

    KeysCaptureTriggerTest(TestDatabase database) {
        super(database);
    }

    @Override
    CaptureShape shape() {
        return CaptureShape.KEYS;
    }
}
