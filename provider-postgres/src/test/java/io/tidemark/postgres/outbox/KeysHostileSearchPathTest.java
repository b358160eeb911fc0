package io.tidemark.postgres.outbox;

import io.tidemark.postgres.CaptureShape;
import io.tidemark.testing.TestDatabase;

/** Every test of {@link HostileSearchPathTest} on an outbox of keys ({@link CaptureShape#KEYS}). */
class KeysHostileSearchPathTest extends HostileSearchPathTest {

    KeysHostileSearchPathTest(TestDatabase database) {
        super(database);
    }

    @Override
    CaptureShape shape() {
        return CaptureShape.KEYS;
    }
}
