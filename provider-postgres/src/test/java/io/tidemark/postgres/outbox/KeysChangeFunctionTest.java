package io.tidemark.postgres.outbox;

import io.tidemark.postgres.CaptureShape;
import io.tidemark.testing.TestDatabase;

/** Every test of {@link ChangeFunctionTest} on an outbox of keys ({@link CaptureShape#KEYS}). */
class KeysChangeFunctionTest extends ChangeFunctionTest {

    KeysChangeFunctionTest(TestDatabase database) {
        super(database);
    }

    @Override
    CaptureShape shape() {
        return CaptureShape.KEYS;
    }
}
