package io.tidemark.postgres.outbox;

import io.tidemark.postgres.CaptureShape;
import io.tidemark.testing.TestDatabase;

/** Every test of {@link OutboxStressTest} on an outbox of keys ({@link CaptureShape#KEYS}). */
class KeysOutboxStressTest extends OutboxStressTest {

    KeysOutboxStressTest(TestDatabase database) {
        super(database);
    }

    @Override
    CaptureShape shape() {
        return CaptureShape.KEYS;
    }
}
