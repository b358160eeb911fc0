package io.tidemark.postgres;

import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.DeliveryPolicy;
import io.tidemark.sync.DestinationStart;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.Destination;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.PooledDataSource;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The reconfiguration storm: while an engine polls real PostgreSQL change functions and rows keep arriving,
 * objects are untracked and tracked again, changed, and destinations removed, added back and replaced, 100 times.
 * Each change function records the start and end ({@code clock_timestamp()}) of every call in a table; a SQL query
 * then asserts that no two calls of one object overlapped. Every destination that stayed (and the one added back
 * at its current position) received no change twice, and the ones that stayed received every change.
 */
@EmbeddedPostgresTest
class LiveReconfigurationStormTest {

    private static final int STORM = 100;
    private static final List<String> OBJECTS = List.of("a", "b", "c");

    private final TestDatabase database;

    LiveReconfigurationStormTest(TestDatabase database) {
        this.database = database;
    }

    @Test
    void a_hundred_reconfigurations_while_polling_never_overlap_calls_nor_deliver_a_change_twice() throws Exception {
        database.execute("""
                CREATE TABLE storm_rows (v bigint PRIMARY KEY, body text NOT NULL);
                CREATE TABLE storm_calls (id bigserial PRIMARY KEY, object_name text NOT NULL,
                                          started timestamptz NOT NULL, ended timestamptz NOT NULL);
                """);
        for (String object : OBJECTS) {
            createFunction(object);
        }
        Ledger stay = new Ledger();
        Ledger swap = new Ledger();
        Ledger churn = new Ledger();
        PooledDataSource pool = PooledDataSource.of(database.dataSource(), 8);
        JdbcWatermarkStore store = JdbcWatermarkStore.create(pool);
        AtomicLong inserted = new AtomicLong();
        AtomicBoolean inserting = new AtomicBoolean(true);
        Thread inserter = new Thread(() -> {
            while (inserting.get()) {
                long v = inserted.get() + 1;
                insert(pool, v);
                inserted.set(v);
                sleep(3);
            }
        }, "storm-inserter");

        try (pool; SyncEngine engine = SyncEngine.builder().provider(PostgresProvider.create(pool))
                .watermarks(store).threads(4).pollInterval(Duration.ofMillis(15)).pageSize(7)
                .track(object("a", null)).track(object("b", null)).track(object("c", 20))
                .destination("stay", stay).destination("swap", swap.view()).build()) {
            engine.start();
            inserter.start();
            for (int i = 0; i < STORM; i++) {
                engine.untrack("Storm-b");
                pause();
                engine.track(object("b", i % 2 == 0 ? 5 : null));
                engine.update(object("c", i % 3 == 0 ? null : 3 + i % 7));
                engine.addDestination("churn", churn, DeliveryPolicy.block(), DestinationStart.CURRENT_POSITION);
                pause();
                engine.replaceDestination("swap", swap.view(), DeliveryPolicy.block());
                engine.removeDestination("churn");
                pause();
            }
            inserting.set(false);
            inserter.join();
            long last = inserted.get();
            for (String object : OBJECTS) {
                assertThat(stay.awaitAll("Storm-" + object, last, Duration.ofSeconds(60)))
                        .as("every change of %s reached the destination that stayed", object).isTrue();
                assertThat(swap.awaitAll("Storm-" + object, last, Duration.ofSeconds(60)))
                        .as("and the one replaced 100 times, through all its instances").isTrue();
            }
        }

        assertThat(overlappingCalls()).as("no two calls of one object overlapped").isEmpty();
        assertThat(callCount()).as("the storm really polled").isGreaterThan(3L * STORM);
        assertThat(stay.duplicates).as("nothing twice to the destination that stayed").isEmpty();
        assertThat(swap.duplicates).as("nothing twice across the replaced destination's instances").isEmpty();
        assertThat(churn.duplicates).as("nothing twice to the one added back at its current position").isEmpty();
        assertThat(churn.received()).as("the one added back did receive changes").isPositive();
    }

    private static TrackedObject object(String name, Integer maxRows) {
        TrackedObject object = TrackedObject.of("Storm-" + name, "public.storm_" + name)
                .initialSync(InitialSync.FULL);
        return maxRows == null ? object : object.maxRows(maxRows);
    }

    /**
     * The contract's simplest honest function over {@code storm_rows}, logging each call's start and end. Rows and
     * the version come from one statement (one snapshot), so a row committed in between cannot be skipped.
     */
    private void createFunction(String object) {
        database.execute("CREATE FUNCTION public.storm_" + object + "(payload json) RETURNS json LANGUAGE plpgsql AS $fn$\n"
                + "DECLARE\n"
                + "  started timestamptz := clock_timestamp();\n"
                + "  from_version bigint := COALESCE((payload ->> 'fromVersion')::bigint, 0);\n"
                + "  rows_json json; top bigint; current_top bigint;\n"
                + "BEGIN\n"
                + "  PERFORM pg_sleep(random() * 0.004);\n"
                + "  SELECT json_agg(json_build_object('$operation', 'I', '$version', r.v, 'Body', r.body) ORDER BY r.v),\n"
                + "         max(r.v), (SELECT COALESCE(max(v), 0) FROM storm_rows)\n"
                + "    INTO rows_json, top, current_top\n"
                + "    FROM (SELECT v, body FROM storm_rows WHERE v > from_version ORDER BY v\n"
                + "          LIMIT (payload ->> 'maxRows')::int) r;\n"
                + "  PERFORM pg_sleep(random() * 0.004);\n"
                + "  INSERT INTO storm_calls (object_name, started, ended) VALUES ('Storm-" + object + "', started, clock_timestamp());\n"
                + "  RETURN json_build_object('Metadata', json_build_object('Sync', json_build_object(\n"
                + "           'Version', COALESCE(top, current_top), 'Type', 'Diff', 'ReasonCode', 0)),\n"
                + "         'Data', COALESCE(rows_json, '[]'::json));\n"
                + "END $fn$;");
    }

    private static void insert(PooledDataSource pool, long v) {
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            s.execute("INSERT INTO storm_rows VALUES (" + v + ", 'row " + v + "')");
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private List<String> overlappingCalls() throws SQLException {
        List<String> overlaps = new ArrayList<>();
        try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("""
                     SELECT a.object_name, a.id, b.id, a.started, a.ended, b.started, b.ended
                       FROM storm_calls a
                       JOIN storm_calls b ON b.object_name = a.object_name AND b.id > a.id
                                         AND b.started < a.ended AND a.started < b.ended
                     """)) {
            while (rs.next()) {
                overlaps.add(rs.getString(1) + ": call " + rs.getLong(2) + " " + rs.getString(4) + ".."
                        + rs.getString(5) + " and call " + rs.getLong(3) + " " + rs.getString(6) + ".."
                        + rs.getString(7));
            }
        }
        return overlaps;
    }

    private long callCount() throws SQLException {
        try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT count(*) FROM storm_calls")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static void pause() {
        sleep(ThreadLocalRandom.current().nextInt(1, 12));
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** What one destination name received, over every instance registered under it: each change once? */
    private static final class Ledger implements Destination {
        final Map<String, Set<Long>> seen = new ConcurrentHashMap<>();
        final List<String> duplicates = java.util.Collections.synchronizedList(new ArrayList<>());

        @Override
        public void deliver(ChangeBatch batch) {
            Set<Long> versions = seen.computeIfAbsent(batch.objectName(), k -> ConcurrentHashMap.newKeySet());
            batch.changes().forEach(change -> {
                long v = change.version().getAsLong();
                if (!versions.add(v)) {
                    duplicates.add(batch.objectName() + " version " + v + " again in " + batch.idempotencyKey());
                }
            });
        }

        /** A new instance delivering into this ledger: what replaceDestination swaps in. */
        Destination view() {
            return this::deliver;
        }

        long received() {
            return seen.values().stream().mapToLong(Set::size).sum();
        }

        boolean awaitAll(String object, long last, Duration timeout) throws InterruptedException {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (System.nanoTime() < deadline) {
                Set<Long> versions = seen.getOrDefault(object, Set.of());
                if (versions.size() >= last) {
                    for (long v = 1; v <= last; v++) {
                        if (!versions.contains(v)) {
                            return false;
                        }
                    }
                    return true;
                }
                TimeUnit.MILLISECONDS.sleep(20);
            }
            return false;
        }
    }
}
