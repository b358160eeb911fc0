package io.tidemark.postgres.outbox;

import io.tidemark.postgres.CaptureShape;
import io.tidemark.testing.TestDatabase;

/** Every test of {@link TrimTest} on an outbox of keys ({@link CaptureShape#KEYS}). */
class KeysTrimTest extends TrimTest {

    KeysTrimTest(TestDatabase database) {
        super(database);
    }

    @Override
    CaptureShape shape() {
        return CaptureShape.KEYS;
    }
}
