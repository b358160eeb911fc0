package io.tidemark.benchmarks.outbox;

import io.tidemark.postgres.PostgresOutbox;
import io.tidemark.testing.EmbeddedPostgresServer;
import io.tidemark.testing.TestDatabase;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * (a) Write overhead of the capture: the same INSERT, UPDATE and DELETE statements of 1, 100 and 1000 rows on three
 * identical tables, in the same run, statement by statement in turn (so noise hits all three alike):
 * <ul>
 *   <li>{@code plain}: no trigger, the baseline;</li>
 *   <li>{@code tidemark}: {@link PostgresOutbox} installed: statement triggers over transition tables, one INSERT
 *       into the outbox per statement;</li>
 *   <li>{@code alternative}: row triggers writing the same outbox rows with the same guarantees: the measurement
 *       behind the choice of statement triggers.</li>
 * </ul>
 * Each statement runs in its own transaction (auto-commit), so commit cost is included, as in an application.
 *
 * <pre>java -cp benchmarks/target/benchmarks.jar io.tidemark.benchmarks.outbox.TriggerOverheadBenchmark [rounds]</pre>
 */
public final class TriggerOverheadBenchmark {

    private static final String COLUMNS = "id bigint PRIMARY KEY, sku text NOT NULL, description text, qty int NOT NULL,"
            + " price numeric(12,2), updated_at timestamptz NOT NULL, attrs json";
    private static final String[] VARIANTS = {"plain", "tidemark", "alternative"};
    /** Statements per variant and round, by statement size. */
    private static final Map<Integer, Integer> STATEMENTS = Map.of(1, 1000, 100, 60, 1000, 12);
    private static final String VERSION = "GREATEST(pg_current_xact_id()::text::bigint,"
            + " pg_snapshot_xmax(pg_current_snapshot())::text::bigint - 1)";

    private TriggerOverheadBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 3;
        try (TestDatabase database = EmbeddedPostgresServer.shared().createDatabase()) {
            DataSource ds = database.dataSource();
            for (String v : VARIANTS) {
                BenchDb.execute(ds, "CREATE TABLE public.bench_" + v + " (" + COLUMNS + ")");
            }
            PostgresOutbox.forTable("public.bench_tidemark").build().install(ds);
            installAlternative(ds);

            // timings.get("insert 100").get("tidemark") = microseconds per statement
            Map<String, Map<String, List<Double>>> timings = new LinkedHashMap<>();
            long[] nextId = {1};
            for (int round = 0; round < rounds + 1; round++) {
                boolean warmUp = round == 0;
                for (int size : new int[] {1, 100, 1000}) {
                    int statements = warmUp ? Math.max(2, STATEMENTS.get(size) / 5) : STATEMENTS.get(size);
                    long first = nextId[0];
                    nextId[0] += (long) statements * size;
                    measure(ds, timings, warmUp, "insert", size, statements, first);
                    measure(ds, timings, warmUp, "update", size, statements, first);
                    measure(ds, timings, warmUp, "delete", size, statements, first);
                }
                if (!warmUp) {
                    System.out.printf(Locale.ROOT, "round %d of %d done%n", round, rounds);
                }
            }
            report(timings, rounds);
        }
    }

    private static void measure(DataSource ds, Map<String, Map<String, List<Double>>> timings, boolean warmUp,
                                String op, int size, int statements, long firstId) throws SQLException {
        String sql = switch (op) {
            case "insert" -> "INSERT INTO public.bench_%s SELECT g, 'SKU-' || g, 'Item ' || g, 1, 9.99, now(),"
                    + " '{\"colour\": \"blue\"}' FROM generate_series(?, ?) g";
            case "update" -> "UPDATE public.bench_%s SET qty = qty + 1, updated_at = now() WHERE id BETWEEN ? AND ?";
            default -> "DELETE FROM public.bench_%s WHERE id BETWEEN ? AND ?";
        };
        Map<String, Connection> connections = new LinkedHashMap<>();
        Map<String, PreparedStatement> prepared = new LinkedHashMap<>();
        try {
            for (String v : VARIANTS) {
                Connection c = ds.getConnection();
                connections.put(v, c);
                prepared.put(v, c.prepareStatement(String.format(sql, v)));
            }
            Map<String, List<Double>> byVariant = timings.computeIfAbsent(op + " " + size, k -> new LinkedHashMap<>());
            for (int i = 0; i < statements; i++) {
                long from = firstId + (long) i * size;
                for (int k = 0; k < VARIANTS.length; k++) {
                    String v = VARIANTS[(i + k) % VARIANTS.length]; // rotate who goes first
                    PreparedStatement s = prepared.get(v);
                    s.setLong(1, from);
                    s.setLong(2, from + size - 1);
                    long started = System.nanoTime();
                    int rows = s.executeUpdate();
                    long micros = (System.nanoTime() - started) / 1000;
                    if (rows != size) {
                        throw new IllegalStateException(op + " on " + v + " changed " + rows + " rows, not " + size);
                    }
                    if (!warmUp) {
                        byVariant.computeIfAbsent(v, x -> new ArrayList<>()).add((double) micros);
                    }
                }
            }
        } finally {
            for (Connection c : connections.values()) {
                c.close();
            }
        }
    }

    private static void report(Map<String, Map<String, List<Double>>> timings, int rounds) {
        System.out.printf(Locale.ROOT, "%nMedian time per statement (microseconds, commit included), %d rounds%n", rounds);
        System.out.printf(Locale.ROOT, "%-12s %10s %22s %26s%n", "statement", "plain", "tidemark (overhead)",
                "alternative (overhead)");
        for (Map.Entry<String, Map<String, List<Double>>> e : timings.entrySet()) {
            double plain = BenchDb.median(e.getValue().get("plain"));
            double tidemark = BenchDb.median(e.getValue().get("tidemark"));
            double alternative = BenchDb.median(e.getValue().get("alternative"));
            int rows = Integer.parseInt(e.getKey().substring(e.getKey().indexOf(' ') + 1));
            System.out.printf(Locale.ROOT, "%-12s %10.0f %10.0f (%+6.0f, %4.1fx) %10.0f (%+6.0f, %4.1fx)   per row: %+.1f / %+.1f us%n",
                    e.getKey(), plain, tidemark, tidemark - plain, tidemark / plain, alternative, alternative - plain,
                    alternative / plain, (tidemark - plain) / rows, (alternative - plain) / rows);
        }
    }

    /**
     * The rejected design, writing the same outbox rows with the same guarantees: row triggers for every operation
     * (an UPDATE trigger whose WHEN clause skips unchanged rows, a changed key as delete plus insert), the same
     * pinned settings, a notification per row (the server folds them into one per transaction).
     */
    private static void installAlternative(DataSource ds) throws SQLException {
        String[] columns = {"sku", "description", "qty", "price", "updated_at", "attrs"};
        StringBuilder changed = new StringBuilder("array_remove(ARRAY[");
        StringBuilder when = new StringBuilder("(OLD.id)::text IS DISTINCT FROM (NEW.id)::text");
        StringBuilder row = new StringBuilder("NEW.id AS id");
        for (int i = 0; i < columns.length; i++) {
            String c = columns[i];
            changed.append(i == 0 ? "" : ", ").append("CASE WHEN (OLD.").append(c).append(")::text IS DISTINCT FROM (NEW.")
                    .append(c).append(")::text THEN '").append(c).append("' END");
            when.append(" OR (OLD.").append(c).append(")::text IS DISTINCT FROM (NEW.").append(c).append(")::text");
            row.append(", NEW.").append(c).append(" AS ").append(c);
        }
        changed.append("], NULL)");
        BenchDb.execute(ds, """
                CREATE TABLE public.bench_alternative_outbox (LIKE public.bench_tidemark_outbox INCLUDING ALL);
                CREATE FUNCTION public.bench_alternative_capture() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
                SET search_path = pg_catalog, pg_temp SET "TimeZone" = 'UTC' SET extra_float_digits = 1
                SET bytea_output = 'hex' SET "IntervalStyle" = 'iso_8601'
                AS $fn$
                BEGIN
                    IF TG_OP = 'INSERT' THEN
                        INSERT INTO public.bench_alternative_outbox (version, xact_id, operation, change)
                        SELECT c."$version", pg_current_xact_id(), 'I', row_to_json(c)
                          FROM (SELECT 'I' AS "$operation", {{version}} AS "$version", {{row}}) c;
                    ELSIF TG_OP = 'DELETE' THEN
                        INSERT INTO public.bench_alternative_outbox (version, xact_id, operation, change)
                        SELECT c."$version", pg_current_xact_id(), 'D', row_to_json(c)
                          FROM (SELECT 'D' AS "$operation", {{version}} AS "$version", OLD.id AS id) c;
                    ELSIF (OLD.id)::text IS DISTINCT FROM (NEW.id)::text THEN
                        INSERT INTO public.bench_alternative_outbox (version, xact_id, operation, change)
                        SELECT c."$version", pg_current_xact_id(), 'D', row_to_json(c)
                          FROM (SELECT 'D' AS "$operation", {{version}} AS "$version", OLD.id AS id) c;
                        INSERT INTO public.bench_alternative_outbox (version, xact_id, operation, change)
                        SELECT c."$version", pg_current_xact_id(), 'I', row_to_json(c)
                          FROM (SELECT 'I' AS "$operation", {{version}} AS "$version", {{row}}) c;
                    ELSE
                        INSERT INTO public.bench_alternative_outbox (version, xact_id, operation, change)
                        SELECT c."$version", pg_current_xact_id(), 'U', row_to_json(c)
                          FROM (SELECT 'U' AS "$operation", {{version}} AS "$version", {{changed}} AS "$changed",
                                       {{row}}) c;
                    END IF;
                    PERFORM pg_notify('tidemark', 'public.bench_alternative_changes');
                    RETURN NULL;
                END
                $fn$;
                CREATE TRIGGER bench_alternative_row AFTER INSERT OR DELETE ON public.bench_alternative
                    FOR EACH ROW EXECUTE FUNCTION public.bench_alternative_capture();
                CREATE TRIGGER bench_alternative_update AFTER UPDATE ON public.bench_alternative
                    FOR EACH ROW WHEN ({{when}}) EXECUTE FUNCTION public.bench_alternative_capture();
                """.replace("{{version}}", VERSION).replace("{{changed}}", changed).replace("{{row}}", row)
                .replace("{{when}}", when));
    }
}
