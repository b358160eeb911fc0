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
 *   <li>{@code tidemark}: {@link PostgresOutbox} installed (statement triggers with transition tables for INSERT
 *       and DELETE, a row trigger with a WHEN clause for UPDATE);</li>
 *   <li>{@code alternative}: the opposite choice for each operation (row triggers for INSERT and DELETE, a
 *       statement trigger with transition tables, pairing old and new rows by key, for UPDATE), writing the same
 *       outbox rows: the measurement behind the choice.</li>
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
     * The rejected design, writing the same outbox rows: row triggers for INSERT and DELETE, a statement trigger
     * with transition tables for UPDATE (old and new rows paired by key, a changed key as delete plus insert).
     */
    private static void installAlternative(DataSource ds) throws SQLException {
        String changed = "array_remove(ARRAY["
                + "CASE WHEN o.sku::text IS DISTINCT FROM n.sku::text THEN 'sku' END,"
                + "CASE WHEN o.description::text IS DISTINCT FROM n.description::text THEN 'description' END,"
                + "CASE WHEN o.qty::text IS DISTINCT FROM n.qty::text THEN 'qty' END,"
                + "CASE WHEN o.price::text IS DISTINCT FROM n.price::text THEN 'price' END,"
                + "CASE WHEN o.updated_at::text IS DISTINCT FROM n.updated_at::text THEN 'updated_at' END,"
                + "CASE WHEN o.attrs::text IS DISTINCT FROM n.attrs::text THEN 'attrs' END], NULL)";
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
                          FROM (SELECT 'I' AS "$operation", {{version}} AS "$version", NEW.id AS id, NEW.sku AS sku,
                                       NEW.description AS description, NEW.qty AS qty, NEW.price AS price,
                                       NEW.updated_at AS updated_at, NEW.attrs AS attrs) c;
                        PERFORM pg_notify('tidemark', 'public.bench_alternative_changes');
                    ELSIF TG_OP = 'DELETE' THEN
                        INSERT INTO public.bench_alternative_outbox (version, xact_id, operation, change)
                        SELECT c."$version", pg_current_xact_id(), 'D', row_to_json(c)
                          FROM (SELECT 'D' AS "$operation", {{version}} AS "$version", OLD.id AS id) c;
                        PERFORM pg_notify('tidemark', 'public.bench_alternative_changes');
                    ELSE
                        INSERT INTO public.bench_alternative_outbox (version, xact_id, operation, change)
                        SELECT v.version, v.xact_id, k.op, d.change
                          FROM (SELECT pg_current_xact_id() AS xact_id, {{version}} AS version) v,
                               old_rows o FULL JOIN new_rows n ON n.id = o.id,
                               LATERAL (SELECT CASE WHEN n.id IS NULL THEN 'D' WHEN o.id IS NULL THEN 'I' ELSE 'U' END AS op) k,
                               LATERAL (SELECT CASE k.op
                                   WHEN 'D' THEN (SELECT row_to_json(c) FROM (SELECT 'D' AS "$operation", v.version AS "$version", o.id AS id) c)
                                   WHEN 'I' THEN (SELECT row_to_json(c) FROM (SELECT 'I' AS "$operation", v.version AS "$version", n.id, n.sku, n.description, n.qty, n.price, n.updated_at, n.attrs) c)
                                   ELSE (SELECT row_to_json(c) FROM (SELECT 'U' AS "$operation", v.version AS "$version", {{changed}} AS "$changed", n.id, n.sku, n.description, n.qty, n.price, n.updated_at, n.attrs) c)
                                   END AS change) d
                         WHERE k.op <> 'U'
                            OR (o.sku::text, o.description::text, o.qty::text, o.price::text, o.updated_at::text, o.attrs::text)
                               IS DISTINCT FROM
                               (n.sku::text, n.description::text, n.qty::text, n.price::text, n.updated_at::text, n.attrs::text);
                        IF FOUND THEN
                            PERFORM pg_notify('tidemark', 'public.bench_alternative_changes');
                        END IF;
                    END IF;
                    RETURN NULL;
                END
                $fn$;
                CREATE TRIGGER bench_alternative_row AFTER INSERT OR DELETE ON public.bench_alternative
                    FOR EACH ROW EXECUTE FUNCTION public.bench_alternative_capture();
                CREATE TRIGGER bench_alternative_update AFTER UPDATE ON public.bench_alternative
                    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
                    FOR EACH STATEMENT EXECUTE FUNCTION public.bench_alternative_capture();
                """.replace("{{version}}", VERSION).replace("{{changed}}", changed));
    }
}
