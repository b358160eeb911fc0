package io.tidemark.postgres;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.ResponsePayload;
import io.tidemark.sync.spi.WatermarkStore;
import io.tidemark.testing.RecordingDestination;
import io.tidemark.testing.TestDatabase;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The log-based captures, providers and engines of one test, as the tests run them (as the superuser, on the test's
 * store, with quick acknowledgements), closed after it in reverse order and their slots dropped: a slot left behind
 * would keep the shared server's WAL.
 */
final class LogicalCaptures implements AutoCloseable {

    private static final AtomicInteger SLOTS = new AtomicInteger();

    private final TestDatabase database;
    private final WatermarkStore store;
    private final List<AutoCloseable> closing = new ArrayList<>();
    private final List<PostgresLogicalCapture> installed = new ArrayList<>();

    LogicalCaptures(TestDatabase database, WatermarkStore store) {
        this.database = database;
        this.store = store;
    }

    /** A slot name of this JVM's own, starting with {@code prefix}. */
    static String slot(String prefix) {
        return prefix + "_" + ProcessHandle.current().pid() + "_" + SLOTS.incrementAndGet();
    }

    /** Installed under a fresh slot name, and uninstalled after the test. */
    PostgresLogicalCapture install(PostgresLogicalCapture.Builder builder) {
        PostgresLogicalCapture capture = builder.slot(slot("tm_lt")).build();
        capture.install(database.dataSource());
        return uninstallLater(capture);
    }

    /** A capture the test installed itself, uninstalled after it. */
    PostgresLogicalCapture uninstallLater(PostgresLogicalCapture capture) {
        installed.add(capture);
        return capture;
    }

    /** The provider's settings the tests start from. */
    PostgresLogicalProvider.Builder builder(PostgresLogicalCapture capture) {
        return PostgresLogicalProvider.builder(capture).connect(database.jdbcUrl(), "postgres", null)
                .watermarks(store).acknowledgeEvery(Duration.ofMillis(100));
    }

    PostgresLogicalProvider provider(PostgresLogicalCapture capture) {
        return provider(builder(capture).statusInterval(Duration.ofMillis(200)));
    }

    /** Built, and closed after the test. */
    PostgresLogicalProvider provider(PostgresLogicalProvider.Builder builder) {
        return closeLater(builder.build());
    }

    /** An engine delivering the object to {@code out}, polled every 200 ms, closed after the test. */
    SyncEngine engine(PostgresLogicalProvider provider, TrackedObject object, RecordingDestination out) {
        return closeLater(SyncEngine.builder().name("logical-" + SLOTS.get()).provider(provider).watermarks(store)
                .track(object.pollInterval(Duration.ofMillis(200))).destination("out", out).build());
    }

    /** Where the capture's slot stands ({@code confirmed_flush_lsn}), as a version. */
    long slotPosition(PostgresLogicalCapture capture) throws Exception {
        try (var c = database.dataSource().getConnection(); var s = c.createStatement();
             var rs = s.executeQuery("SELECT (confirmed_flush_lsn - '0/0')::bigint FROM pg_replication_slots"
                     + " WHERE slot_name = '" + capture.slot() + "'")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** A provider's answer as JSON; the payload is closed. */
    static JsonNode json(ResponsePayload payload) throws Exception {
        try (payload; var parser = payload.openParser(new JsonFactory())) {
            return new ObjectMapper().readTree(parser);
        }
    }

    /** Whether {@code condition} holds within {@code wait}, checked every 20 ms. */
    static boolean within(Duration wait, Callable<Boolean> condition) throws Exception {
        long deadline = System.nanoTime() + wait.toNanos();
        while (!condition.call()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(20);
        }
        return true;
    }

    /** Until {@code condition} holds; fails naming {@code what} after {@code wait}. */
    static void until(String what, Duration wait, Callable<Boolean> condition) throws Exception {
        if (!within(wait, condition)) {
            throw new AssertionError(what + ": not within " + wait);
        }
    }

    <T extends AutoCloseable> T closeLater(T resource) {
        closing.add(resource);
        return resource;
    }

    @Override
    public void close() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
        for (PostgresLogicalCapture capture : installed) {
            capture.uninstall(database.dataSource());
        }
    }
}
