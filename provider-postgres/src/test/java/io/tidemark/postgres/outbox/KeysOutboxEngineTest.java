package io.tidemark.postgres.outbox;

import io.tidemark.postgres.CaptureShape;
import io.tidemark.testing.TestDatabase;

/** Every test of {@link OutboxEngineTest} on an outbox of keys ({@link CaptureShape#KEYS}). */
class KeysOutboxEngineTest extends OutboxEngineTest {

    KeysOutboxEngineTest(TestDatabase database) {
        super(database);
    }

    @Override
    CaptureShape shape() {
        return CaptureShape.KEYS;
    }
}
