package io.tidemark.examples.readme;

import io.tidemark.sync.SyncEngine;

import java.time.Duration;
import java.util.concurrent.Callable;

/** Waits for what a snippet started in the background, without guessing a sleep. */
final class Await {

    private Await() {
    }

    /**
     * Until the object's first cycle stored a watermark. An INCREMENTAL object starts from "now", so a change
     * written before its seed is, correctly, never delivered: a test must write after it.
     */
    static void seeded(SyncEngine engine, String object) throws Exception {
        until(object + " seeded", Duration.ofSeconds(30), () -> engine.status(object).stored().version().isPresent());
    }

    /** Until {@code condition} holds, checked every 20 ms; fails naming {@code what} after {@code timeout}. */
    static void until(String what, Duration timeout, Callable<Boolean> condition) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.call()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within " + timeout.toSeconds() + " s: " + what);
            }
            Thread.sleep(20);
        }
    }
}
