package io.tidemark.postgres.coordination;

import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.Coordination;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TrackedObject;
import io.tidemark.postgres.PostgresProvider;
import io.tidemark.sync.spi.Destination;
import io.tidemark.sync.spi.SyncListener;
import io.tidemark.sync.spi.WatermarkState;
import io.tidemark.sync.spi.WatermarkStore;

import javax.sql.DataSource;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A steady stream of changes for engines on several instances, in one database: {@code objects} change functions
 * over one table of rows (one version sequence per object, written by one writer in commit order), and a
 * destination that records every change it is given, with the page's idempotency key and the instance that
 * delivered it, in a table the test reads. Used by the tests in this JVM and by the child JVMs
 * ({@link CoordinatedChild}).
 */
final class StreamFixture {

    /** Rows per call and per page: a page offered again after a failover is the same page, with the same key. */
    static final int PAGE = 20;

    private StreamFixture() {
    }

    static List<String> objectNames(int objects) {
        List<String> names = new ArrayList<>();
        for (int i = 1; i <= objects; i++) {
            names.add(String.format("stream_%02d", i));
        }
        return names;
    }

    /** As {@link #install}, unless done already (the database belongs to the test class, an instance to a method). */
    static void installOnce(DataSource ds, int objects) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT to_regclass('public.stream_rows') IS NOT NULL")) {
            rs.next();
            if (rs.getBoolean(1)) {
                return;
            }
        }
        install(ds, objects);
    }

    /** Creates the rows table, one change function per object and the delivery log. */
    static void install(DataSource ds, int objects) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE stream_rows (object text NOT NULL, v bigint NOT NULL, PRIMARY KEY (object, v))");
            s.execute("CREATE TABLE stream_delivered (object text NOT NULL, destination text NOT NULL,"
                    + " v bigint NOT NULL, idempotency_key text NOT NULL, instance text NOT NULL)");
            for (String name : objectNames(objects)) {
                s.execute("CREATE FUNCTION public." + name + "(payload json) RETURNS json LANGUAGE plpgsql AS $fn$\n"
                        + "DECLARE from_version bigint := COALESCE((payload ->> 'fromVersion')::bigint, 0);\n"
                        + "  rows_json json; top bigint;\n"
                        + "BEGIN\n"
                        + "  SELECT json_agg(json_build_object('$operation', 'I', '$version', r.v, 'Id', r.v)"
                        + " ORDER BY r.v), max(r.v) INTO rows_json, top\n"
                        + "    FROM (SELECT v FROM stream_rows WHERE object = '" + name + "' AND v > from_version"
                        + " ORDER BY v LIMIT (payload ->> 'maxRows')::int) r;\n"
                        + "  RETURN json_build_object('Metadata', json_build_object('Sync', json_build_object("
                        + "'Version', COALESCE(top, from_version), 'Type', 'Diff', 'ReasonCode', 0)),"
                        + " 'Data', COALESCE(rows_json, '[]'::json));\n"
                        + "END $fn$");
            }
        }
    }

    /** Adds version {@code v} to every object, in one transaction (so commit order is version order). */
    static void write(DataSource ds, int objects, long v) throws SQLException {
        try (Connection c = ds.getConnection();
             PreparedStatement ps = c.prepareStatement("INSERT INTO stream_rows SELECT o, ? FROM unnest(?) o")) {
            ps.setLong(1, v);
            ps.setArray(2, c.createArrayOf("text", objectNames(objects).toArray()));
            ps.executeUpdate();
        }
    }

    /** Adds versions {@code first} to {@code last} of one object, in one transaction. */
    static void writeRange(DataSource ds, String object, long first, long last) throws SQLException {
        try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(
                "INSERT INTO stream_rows SELECT ?, v FROM generate_series(?::bigint, ?::bigint) v")) {
            ps.setString(1, object);
            ps.setLong(2, first);
            ps.setLong(3, last);
            ps.executeUpdate();
        }
    }

    /** A destination that adds {@code object:version} of every change it is offered to {@code into}. */
    static Destination versionRecorder(List<String> into) {
        return batch -> batch.changes().forEach(c -> into.add(batch.objectName() + ":" + c.version().getAsLong()));
    }

    /** The object's stored watermark, -1 when it has none. */
    static long watermark(WatermarkStore store, String object) {
        return store.load(object).map(WatermarkState::version).orElse(OptionalLong.empty()).orElse(-1);
    }

    /** The destination's stored position for the object, -1 when it has none. */
    static long position(WatermarkStore store, String object, String destination) {
        return store.load(object).map(s -> s.positions().get(destination))
                .map(p -> p.version() == null ? -1L : p.version()).orElse(-1L);
    }

    /** An engine of one instance over the stream: two destinations, coordination with the given lease. */
    static SyncEngine engine(DataSource ds, int objects, String instance, Duration lease, SyncListener... listeners) {
        SyncEngine.Builder builder = SyncEngine.builder()
                .name(instance)
                .provider(PostgresProvider.create(ds))
                .watermarks(JdbcWatermarkStore.create(ds))
                .pollInterval(Duration.ofMillis(200))
                .pageSize(PAGE)
                .threads(4)
                .shutdownTimeout(Duration.ofSeconds(10))
                .coordination(Coordination.builder().instanceId(instance).leaseDuration(lease).build());
        for (String name : objectNames(objects)) {
            builder.track(TrackedObject.of(name, "public." + name).maxRows(PAGE));
        }
        for (SyncListener listener : listeners) {
            builder.listener(listener);
        }
        for (String destination : List.of("d1", "d2")) {
            builder.destination(destination, recorder(ds, destination, instance));
        }
        return builder.build();
    }

    /** Records each change of a page in stream_delivered, in one statement. */
    static Destination recorder(DataSource ds, String destination, String instance) {
        return batch -> record(ds, destination, instance, batch);
    }

    private static void record(DataSource ds, String destination, String instance, ChangeBatch batch)
            throws SQLException {
        Long[] versions = batch.changes().stream().map(ch -> ch.version().getAsLong()).toArray(Long[]::new);
        try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(
                "INSERT INTO stream_delivered SELECT ?, ?, v, ?, ? FROM unnest(?) v")) {
            ps.setString(1, batch.objectName());
            ps.setString(2, destination);
            ps.setString(3, batch.idempotencyKey());
            ps.setString(4, instance);
            ps.setArray(5, c.createArrayOf("bigint", versions));
            ps.executeUpdate();
        }
    }

    /** The lowest version every object and destination has been given, or 0. */
    static long deliveredEverywhere(DataSource ds, int objects) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT count(*), COALESCE(min(top), 0) FROM (SELECT max(v) AS top"
                     + " FROM stream_delivered GROUP BY object, destination) t")) {
            rs.next();
            return rs.getInt(1) == objects * 2 ? rs.getLong(2) : 0;
        }
    }

    /**
     * What a run delivered, checked against what was written: versions never delivered; versions delivered more
     * than once; of those, how many were delivered again by the same instance (not a failover), how many carry the
     * same idempotency key both times (the same page offered again), and the most repeated versions of one object
     * at one destination.
     */
    record Verdict(long missing, long duplicates, long sameInstance, long sameKey, long mostPerStream,
                   Map<String, Long> byInstance) {
    }

    /** For every object and destination, versions 1..{@code last}. */
    static Verdict verdict(DataSource ds, long last) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            long missing;
            try (ResultSet rs = s.executeQuery("SELECT count(*) FROM (SELECT DISTINCT object FROM stream_rows) o"
                    + " CROSS JOIN (VALUES ('d1'), ('d2')) d(destination) CROSS JOIN generate_series(1, " + last
                    + ") v WHERE NOT EXISTS (SELECT 1 FROM stream_delivered x WHERE x.object = o.object"
                    + " AND x.destination = d.destination AND x.v = v)")) {
                rs.next();
                missing = rs.getLong(1);
            }
            Verdict verdict;
            try (ResultSet rs = s.executeQuery("SELECT count(*), count(*) FILTER (WHERE instances = 1),"
                    + " count(*) FILTER (WHERE keys = 1), COALESCE(max(per_stream), 0) FROM ("
                    + "SELECT count(DISTINCT instance) AS instances, count(DISTINCT idempotency_key) AS keys,"
                    + " count(*) OVER (PARTITION BY object, destination) AS per_stream FROM stream_delivered"
                    + " GROUP BY object, destination, v HAVING count(*) > 1) t")) {
                rs.next();
                verdict = new Verdict(missing, rs.getLong(1), rs.getLong(2), rs.getLong(3), rs.getLong(4),
                        new HashMap<>());
            }
            try (ResultSet rs = s.executeQuery("SELECT instance, count(*) FROM stream_delivered GROUP BY instance")) {
                while (rs.next()) {
                    verdict.byInstance().put(rs.getString(1), rs.getLong(2));
                }
            }
            return verdict;
        }
    }

    /** {@code ds} as a holder cut off from the database sees it: while {@code partitioned}, no connection opens. */
    static DataSource partitionable(DataSource ds, AtomicBoolean partitioned) {
        return (DataSource) Proxy.newProxyInstance(StreamFixture.class.getClassLoader(),
                new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
                    if (method.getName().equals("getConnection") && partitioned.get()) {
                        throw new SQLTransientConnectionException("partitioned by the test", "08001");
                    }
                    try {
                        return method.invoke(ds, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    /**
     * Object name to holder, for unexpired leases; none before the lease table exists (the first engine with
     * coordination creates it when it is built, which a child JVM may not have done yet).
     */
    static Map<String, String> holders(DataSource ds) throws SQLException {
        Map<String, String> holders = new HashMap<>();
        try (Connection c = ds.getConnection(); Statement s = c.createStatement();
             ResultSet exists = s.executeQuery("SELECT to_regclass('tidemark.sync_state_leases') IS NOT NULL")) {
            exists.next();
            if (!exists.getBoolean(1)) {
                return holders;
            }
        }
        try (Connection c = ds.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT object_name, holder FROM tidemark.sync_state_leases"
                     + " WHERE expires_at > clock_timestamp()")) {
            while (rs.next()) {
                holders.put(rs.getString(1), rs.getString(2));
            }
        }
        return holders;
    }

    /** How many objects each holder holds. */
    static Map<String, Integer> counts(Map<String, String> holders) {
        Map<String, Integer> counts = new HashMap<>();
        holders.values().forEach(h -> counts.merge(h, 1, Integer::sum));
        return counts;
    }

    /** One writer thread adding a version to every object every 25 ms, until stopped. */
    static final class Writer {
        private final AtomicBoolean writing = new AtomicBoolean(true);
        private final AtomicLong written = new AtomicLong();
        private final Thread thread;

        Writer(DataSource ds, int objects) {
            thread = new Thread(() -> {
                while (writing.get()) {
                    try {
                        write(ds, objects, written.get() + 1);
                        written.incrementAndGet();
                        Thread.sleep(25);
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }
            }, "stream-writer");
            thread.start();
        }

        /** Stops writing; returns the last version written. */
        long stop() throws InterruptedException {
            writing.set(false);
            thread.join();
            return written.get();
        }
    }
}
