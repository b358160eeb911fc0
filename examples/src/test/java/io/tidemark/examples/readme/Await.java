package io.tidemark.examples.readme;

import io.tidemark.sync.SyncEngine;

import java.time.Duration;

/** Waits for what a snippet started in the background, without guessing a sleep. */
final class Await {

    private Await() {
    }

    /**
     * Until the object's first cycle stored a watermark. An INCREMENTAL object starts from "now", so a change
     * written before its seed is, correctly, never delivered: a test must write after it.
     */
    static void seeded(SyncEngine engine, String object) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (engine.status(object).stored().version().isEmpty()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(object + " was not seeded within 30 s: " + engine.status(object));
            }
            Thread.sleep(20);
        }
    }
}
