package io.tidemark.postgres.coordination;

import java.time.Duration;

/** Waits for a condition checked against the database, failing with what was awaited. */
final class Await {

    @FunctionalInterface
    interface Condition {
        boolean holds() throws Exception;
    }

    private Await() {
    }

    static void until(Duration timeout, String what, Condition condition) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.holds()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("Timed out after " + timeout + " waiting for: " + what);
            }
            Thread.sleep(50);
        }
    }
}
