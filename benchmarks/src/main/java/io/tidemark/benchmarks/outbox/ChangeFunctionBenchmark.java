package io.tidemark.benchmarks.outbox;

import io.tidemark.benchmarks.ProcStat;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.tidemark.postgres.PostgresOutbox;
import io.tidemark.testing.EmbeddedPostgresServer;
import io.tidemark.testing.TestDatabase;

import javax.sql.DataSource;
import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * (b) Change-function throughput: Tidemark's generated function against the reference function of
 * docs/contract.md#the-in-flight-transaction-gap, reading the same changes. Both capture triggers sit on one table, so every write lands in
 * both outboxes: the same 200,000 changes (inserts, updates, deletes in transactions of 100), with the same JSON keys
 * ({@code ItemCode}, {@code Description}). Each measured call asks for every change after the start and reads the
 * whole answer on the client, alternating reference and Tidemark; the reference ignores maxRows, so the un-paged call
 * is the fair comparison (Tidemark read in pages of 10,000 and of 1,000 changes is reported too).
 *
 * <pre>java -cp benchmarks/target/benchmarks.jar io.tidemark.benchmarks.outbox.ChangeFunctionBenchmark [changes] [runs]</pre>
 */
public final class ChangeFunctionBenchmark {

    private static final JsonFactory JSON = new JsonFactory();

    private ChangeFunctionBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int changes = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
        int runs = args.length > 1 ? Integer.parseInt(args[1]) : 7;
        try (TestDatabase database = EmbeddedPostgresServer.shared().createDatabase()) {
            DataSource ds = database.dataSource();
            BenchDb.createItemsWithReference(ds);
            PostgresOutbox outbox = PostgresOutbox.forTable("public.items")
                    .outboxTable("public.tidemark_items_outbox")
                    .payloadKey("item_code", "ItemCode")
                    .payloadKey("description", "Description")
                    .build();
            outbox.install(ds);
            // For measurement only, not shipped: the same outbox read answering as text (string aggregation, no json
            // type), to show what the json return type of the change function costs. The page is the generated
            // function's without maxRows (the benchmark sends none): everything below the horizon.
            BenchDb.execute(ds, """
                    CREATE FUNCTION public.items_changes_as_text(payload json) RETURNS text LANGUAGE sql STABLE
                    SET search_path = pg_catalog, pg_temp AS $$
                    SELECT '{"Metadata":{"Sync":{"Version":' || r.page_end || ',"Type":"Diff","ReasonCode":0}},"Data":['
                           || COALESCE((SELECT string_agg(o.change::text, ',' ORDER BY o.version, o.id)
                                          FROM public.tidemark_items_outbox o
                                         WHERE o.version > r.from_version AND o.version <= r.page_end), '') || ']}'
                      FROM (SELECT (payload ->> 'fromVersion')::bigint AS from_version,
                                   pg_snapshot_xmin(pg_current_snapshot())::text::bigint - 1 AS page_end) AS r
                    $$""");
            long from = seed(ds, outbox.changeFunction());
            write(ds, changes);
            long inReference = BenchDb.scalar(ds, "SELECT count(*) FROM public.items_outbox");
            long inTidemark = BenchDb.scalar(ds, "SELECT count(*) FROM " + outbox.outboxTable());
            System.out.printf(Locale.ROOT, "%,d changes captured by the reference trigger, %,d by Tidemark's%n",
                    inReference, inTidemark);
            if (inReference != changes || inTidemark != changes) {
                throw new IllegalStateException("the two outboxes do not hold the same number of changes");
            }
            BenchDb.execute(ds, "VACUUM ANALYZE public.items_outbox, " + outbox.outboxTable());

            String reference = "{\"fromVersion\":0,\"mode\":\"sync\"}";
            String tidemark = "{\"fromVersion\":" + from + ",\"mode\":\"sync\"}";
            List<Double> referenceRates = new ArrayList<>();
            List<Double> tidemarkRates = new ArrayList<>();
            List<Double> referenceServer = new ArrayList<>();
            List<Double> tidemarkServer = new ArrayList<>();
            List<Double> referenceCpu = new ArrayList<>();
            List<Double> tidemarkCpu = new ArrayList<>();
            List<Double> pagedRates = new ArrayList<>();
            List<Double> smallPageRates = new ArrayList<>();
            List<Double> textRates = new ArrayList<>();
            List<Double> textCpu = new ArrayList<>();
            List<Double> referenceFaults = new ArrayList<>();
            List<Double> tidemarkFaults = new ArrayList<>();
            List<Double> referenceWarmRates = new ArrayList<>();
            List<Double> tidemarkWarmRates = new ArrayList<>();
            List<Double> referenceWarmCpu = new ArrayList<>();
            List<Double> tidemarkWarmCpu = new ArrayList<>();
            List<Double> referenceWarmFaults = new ArrayList<>();
            List<Double> tidemarkWarmFaults = new ArrayList<>();
            long[] sizes = new long[2];
            try (PooledBackend referenceBackend = new PooledBackend(ds, "public.get_item_changes");
                 PooledBackend tidemarkBackend = new PooledBackend(ds, outbox.changeFunction())) {
            for (int i = 0; i < runs + 2; i++) {
                long[] r = call(ds, "public.get_item_changes", reference);
                long[] t = call(ds, outbox.changeFunction(), tidemark);
                long[] rs = serverOnly(ds, "public.get_item_changes", reference);
                long[] ts = serverOnly(ds, outbox.changeFunction(), tidemark);
                long p = paged(ds, outbox.changeFunction(), from, 10_000, changes);
                long small = paged(ds, outbox.changeFunction(), from, 1_000, changes);
                long[] x = call(ds, "public.items_changes_as_text", tidemark);
                long[] xs = serverOnly(ds, "public.items_changes_as_text", tidemark);
                long[] rw = referenceBackend.call(reference);
                long[] tw = tidemarkBackend.call(tidemark);
                if (rw[3] != changes || tw[3] != changes) {
                    throw new IllegalStateException("a pooled call returned " + rw[3] + " / " + tw[3] + " changes");
                }
                if (x[1] != changes) {
                    throw new IllegalStateException("the text answer held " + x[1] + " changes, not " + changes);
                }
                if (r[1] != changes || t[1] != changes) {
                    throw new IllegalStateException("a call returned " + r[1] + " / " + t[1] + " changes, not " + changes);
                }
                sizes[0] = r[2];
                sizes[1] = t[2];
                if (i >= 2) {
                    referenceRates.add(changes / (r[0] / 1e9));
                    tidemarkRates.add(changes / (t[0] / 1e9));
                    referenceServer.add(changes / (rs[0] / 1e9));
                    tidemarkServer.add(changes / (ts[0] / 1e9));
                    referenceCpu.add((double) rs[1]);
                    tidemarkCpu.add((double) ts[1]);
                    pagedRates.add(changes / (p / 1e9));
                    smallPageRates.add(changes / (small / 1e9));
                    textRates.add(changes / (x[0] / 1e9));
                    textCpu.add((double) xs[1]);
                    referenceFaults.add((double) rs[2]);
                    tidemarkFaults.add((double) ts[2]);
                    referenceWarmRates.add(changes / (rw[0] / 1e9));
                    tidemarkWarmRates.add(changes / (tw[0] / 1e9));
                    referenceWarmCpu.add((double) rw[1]);
                    tidemarkWarmCpu.add((double) tw[1]);
                    referenceWarmFaults.add((double) rw[2]);
                    tidemarkWarmFaults.add((double) tw[2]);
                }
            }
            }
            double ref = BenchDb.median(referenceRates);
            System.out.printf(Locale.ROOT, "%nReading %,d changes in one call, median of %d runs (after 2 warm-ups;"
                    + " reference %.1f MB of JSON, Tidemark %.1f MB):%n", changes, runs, sizes[0] / 1e6, sizes[1] / 1e6);
            compare("%,10.0f changes/s", referenceRates, tidemarkRates, true);
            System.out.printf(Locale.ROOT, "%nThe same calls with only the answer's length sent back (the database's work alone):%n");
            compare("%,10.0f changes/s", referenceServer, tidemarkServer, true);
            System.out.printf(Locale.ROOT, "%nCPU time of the database process for those calls (10 ms resolution):%n");
            double refCpu = compare("%,10.0f ms", referenceCpu, tidemarkCpu, false);
            System.out.printf(Locale.ROOT, "%nMinor page faults of the database process for those calls:%n");
            compare("%,10.0f", referenceFaults, tidemarkFaults, false);
            System.out.printf(Locale.ROOT, "%nOne pooled connection per function, kept open across the runs (answer read"
                    + " whole by the client):%n");
            compare("%,10.0f changes/s", referenceWarmRates, tidemarkWarmRates, true);
            compare("%,10.0f ms CPU", referenceWarmCpu, tidemarkWarmCpu, false);
            compare("%,10.0f page faults", referenceWarmFaults, tidemarkWarmFaults, false);
            System.out.printf(Locale.ROOT, "  server allocator: MALLOC_MMAP_THRESHOLD_=%s MALLOC_TRIM_THRESHOLD_=%s"
                            + " (inherited from this JVM's environment)%n",
                    System.getenv().getOrDefault("MALLOC_MMAP_THRESHOLD_", "default"),
                    System.getenv().getOrDefault("MALLOC_TRIM_THRESHOLD_", "default"));
            System.out.printf(Locale.ROOT, "%nTidemark read in pages of maxRows 10,000: %,10.0f changes/s   runs %s%n",
                    BenchDb.median(pagedRates), format(pagedRates));
            System.out.printf(Locale.ROOT, "Tidemark read in pages of maxRows 1,000:  %,10.0f changes/s   runs %s%n",
                    BenchDb.median(smallPageRates), format(smallPageRates));
            System.out.printf(Locale.ROOT, "Not shipped, for comparison: the same outbox answering as text:%n");
            System.out.printf(Locale.ROOT, "  %,10.0f changes/s (%.2fx the reference), database CPU %.0f ms (%.2fx less)"
                            + "   runs %s%n", BenchDb.median(textRates), BenchDb.median(textRates) / ref,
                    BenchDb.median(textCpu), refCpu / BenchDb.median(textCpu), format(textRates));
        }
    }

    private static long seed(DataSource ds, String function) throws SQLException, IOException {
        try (Connection c = ds.getConnection();
             PreparedStatement s = c.prepareStatement("SELECT " + function + "('{\"mode\":\"seed\"}'::json)::text");
             ResultSet rs = s.executeQuery()) {
            rs.next();
            return versionAndCount(rs.getBytes(1))[0];
        }
    }

    /** Inserts, updates (each a real change) and deletes, in transactions of 100 rows. */
    static void write(DataSource ds, int changes) throws SQLException {
        int inserts = changes / 2;
        int updates = changes * 3 / 10;
        int deletes = changes - inserts - updates;
        try (Connection c = ds.getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement insert = c.prepareStatement("INSERT INTO public.items SELECT 'ITEM-' || g,"
                    + " 'Description of item ' || g FROM generate_series(?, ?) g");
                 PreparedStatement update = c.prepareStatement("UPDATE public.items SET description = description"
                         + " || ' (revised)' WHERE item_code IN (SELECT 'ITEM-' || g FROM generate_series(?, ?) g)");
                 PreparedStatement delete = c.prepareStatement("DELETE FROM public.items WHERE item_code IN"
                         + " (SELECT 'ITEM-' || g FROM generate_series(?, ?) g)")) {
                batches(c, insert, 1, inserts);
                batches(c, update, 1, updates);
                batches(c, delete, 1, deletes);
            }
        }
    }

    private static void batches(Connection c, PreparedStatement s, int from, int count) throws SQLException {
        for (int start = from; start < from + count; start += 100) {
            s.setInt(1, start);
            s.setInt(2, Math.min(start + 99, from + count - 1));
            s.executeUpdate();
            c.commit();
        }
    }

    /** {nanoseconds, changes, bytes} of one call, the answer read whole on the client and its changes counted. */
    static long[] call(DataSource ds, String function, String request) throws SQLException, IOException {
        try (Connection c = ds.getConnection();
             PreparedStatement s = c.prepareStatement("SELECT " + function + "(?::json)")) {
            s.setString(1, request);
            long started = System.nanoTime();
            byte[] answer = answer(s);
            long nanos = System.nanoTime() - started;
            return new long[] {nanos, countChanges(answer), answer.length};
        }
    }

    /** Runs the prepared call and reads its one value whole, as the engine's client does. */
    private static byte[] answer(PreparedStatement call) throws SQLException {
        try (ResultSet rs = call.executeQuery()) {
            rs.next();
            return rs.getBytes(1);
        }
    }

    /**
     * {nanoseconds, backend CPU milliseconds, backend minor page faults} of one call whose answer stays in the database
     * ({@code length(fn(...)::text)}). The CPU time the server process spent, read from /proc, is what to compare on a
     * machine shared with other work: waiting for a CPU does not count.
     */
    private static long[] serverOnly(DataSource ds, String function, String request) throws SQLException, IOException {
        try (Connection c = ds.getConnection();
             PreparedStatement s = c.prepareStatement("SELECT length(" + function + "(?::json)::text)")) {
            int pid = backendPid(c);
            s.setString(1, request);
            long cpu = ProcStat.cpuMillis(pid);
            long faults = ProcStat.minorFaults(pid);
            long started = System.nanoTime();
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                rs.getLong(1);
            }
            return new long[] {System.nanoTime() - started, ProcStat.cpuMillis(pid) - cpu,
                    ProcStat.minorFaults(pid) - faults};
        }
    }

    /**
     * One connection kept open for one function, as a pool keeps it for the engine: the server process is warm, so
     * what a call costs is the function's work, plus the fresh memory the server's allocator has to map for it.
     */
    static final class PooledBackend implements AutoCloseable {
        private final Connection connection;
        private final PreparedStatement statement;
        private final int pid;

        PooledBackend(DataSource ds, String function) throws SQLException {
            connection = ds.getConnection();
            statement = connection.prepareStatement("SELECT " + function + "(?::json)");
            pid = backendPid(connection);
        }

        /** {nanoseconds, backend CPU ms, backend minor page faults, changes, bytes} of one call read whole. */
        long[] call(String request) throws SQLException, IOException {
            statement.setString(1, request);
            long cpu = ProcStat.cpuMillis(pid);
            long faults = ProcStat.minorFaults(pid);
            long started = System.nanoTime();
            byte[] answer = answer(statement);
            long nanos = System.nanoTime() - started;
            return new long[] {nanos, ProcStat.cpuMillis(pid) - cpu, ProcStat.minorFaults(pid) - faults,
                    countChanges(answer), answer.length};
        }

        @Override
        public void close() throws SQLException {
            statement.close();
            connection.close();
        }
    }

    static int backendPid(Connection c) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("SELECT pg_backend_pid()"); ResultSet rs = s.executeQuery()) {
            rs.next();
            return rs.getInt(1);
        }
    }

    /** Nanoseconds to read every change with maxRows pages, each page's version fed into the next call. */
    private static long paged(DataSource ds, String function, long from, int maxRows, int expected)
            throws SQLException, IOException {
        long started = System.nanoTime();
        long seen = 0;
        long version = from;
        try (Connection c = ds.getConnection();
             PreparedStatement s = c.prepareStatement("SELECT " + function + "(?::json)")) {
            while (true) {
                s.setString(1, "{\"fromVersion\":" + version + ",\"mode\":\"sync\",\"maxRows\":" + maxRows + "}");
                byte[] answer;
                try (ResultSet rs = s.executeQuery()) {
                    rs.next();
                    answer = rs.getBytes(1);
                }
                long[] page = versionAndCount(answer);
                if (page[1] == 0) {
                    break;
                }
                seen += page[1];
                version = page[0];
            }
        }
        if (seen != expected) {
            throw new IllegalStateException("paged read saw " + seen + " changes, not " + expected);
        }
        return System.nanoTime() - started;
    }

    private static long countChanges(byte[] answer) throws IOException {
        return versionAndCount(answer)[1];
    }

    /** {Metadata.Sync.Version, number of elements of Data}. */
    static long[] versionAndCount(byte[] answer) throws IOException {
        try (JsonParser p = JSON.createParser(answer)) {
            return versionAndCount(p);
        }
    }

    /** {Metadata.Sync.Version, number of elements of Data} of the answer the parser is at the start of. */
    static long[] versionAndCount(JsonParser p) throws IOException {
        long version = -1;
        long count = 0;
        p.nextToken();
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String key = p.currentName();
            p.nextToken();
            if ("Data".equals(key) && p.currentToken() == JsonToken.START_ARRAY) {
                while (p.nextToken() == JsonToken.START_OBJECT) {
                    p.skipChildren();
                    count++;
                }
            } else if ("Metadata".equals(key) && p.currentToken() == JsonToken.START_OBJECT) {
                int depth = 1; // Metadata.Sync.Version sits one object deeper
                while (depth > 0) {
                    JsonToken t = p.nextToken();
                    if (t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY) {
                        depth++;
                    } else if (t == JsonToken.END_OBJECT || t == JsonToken.END_ARRAY) {
                        depth--;
                    } else if (t == JsonToken.FIELD_NAME && depth == 2 && "Version".equals(p.currentName())) {
                        p.nextToken();
                        version = p.getLongValue();
                    }
                }
            } else {
                p.skipChildren();
            }
        }
        return new long[] {version, count};
    }

    /**
     * Prints the medians and runs of both, and the ratio in Tidemark's favour; returns the reference's median.
     *
     * @param higherIsBetter true for rates, false for costs
     */
    private static double compare(String unit, List<Double> reference, List<Double> tidemark, boolean higherIsBetter) {
        double ref = BenchDb.median(reference);
        double ours = BenchDb.median(tidemark);
        System.out.printf(Locale.ROOT, "  reference  " + unit + "   runs %s%n", ref, format(reference));
        System.out.printf(Locale.ROOT, "  tidemark   " + unit + "   runs %s%n", ours, format(tidemark));
        if (ref > 0 && ours > 0) {
            System.out.printf(Locale.ROOT, "  Tidemark's advantage: %.2fx%n", higherIsBetter ? ours / ref : ref / ours);
        }
        return ref;
    }

    static String format(List<Double> rates) {
        StringBuilder s = new StringBuilder();
        for (double r : rates) {
            s.append(s.length() == 0 ? "" : " / ").append(String.format(Locale.ROOT, "%,.0f", r));
        }
        return s.toString();
    }
}
