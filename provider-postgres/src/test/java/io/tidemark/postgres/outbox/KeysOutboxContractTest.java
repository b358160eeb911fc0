package io.tidemark.postgres.outbox;

import io.tidemark.postgres.CaptureShape;
import io.tidemark.testing.TestDatabase;

/** Every test of {@link OutboxContractTest} on an outbox of keys ({@link CaptureShape#KEYS}). */
class KeysOutboxContractTest extends OutboxContractTest {

    KeysOutboxContractTest(TestDatabase database) {
        super(database);
    }

    @Override
    CaptureShape shape() {
        return CaptureShape.KEYS;
    }
}
