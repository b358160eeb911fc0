package io.tidemark.benchmarks.capture;

import io.tidemark.benchmarks.ProcStat;
import io.tidemark.postgres.CaptureShape;
import io.tidemark.postgres.PostgresOutbox;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import javax.sql.DataSource;

/**
 * Where the capture's write cost goes, and what other designs of the write path would cost: the database CPU one
 * transaction takes, on identical tables of the benchmark row, for single-row and 1,000-row INSERT, UPDATE and
 * DELETE statements, with Tidemark's generated capture and with <em>design probes</em>: minimal triggers, written
 * here and nowhere else, that record less or record differently. A probe is not a capture Tidemark ships (it skips
 * guarantees such as {@code $changed} or wake-ups, as its description says); it bounds what a design can cost at
 * best, so that a design is chosen from figures before it is built.
 *
 * <p>Why CPU and not throughput: the statements run in a loop inside one backend (a procedure that commits after
 * every statement), so no client, driver or network time is in the figure and the machine's other load moves it
 * far less than a throughput. The figure is that backend's user + system CPU (/proc, 10 ms ticks; each cell runs
 * long enough for ticks not to matter) divided by the transactions it ran. What capture costs the application's
 * throughput is {@link WriteCostBenchmark}'s figure; this one says where that cost comes from.
 *
 * <pre>java -cp benchmarks/target/benchmarks.jar io.tidemark.benchmarks.capture.CaptureDesignBenchmark [rounds] [scale]</pre>
 *
 * {@code rounds} (default 3) interleaved rounds, variants in turn within each cell; {@code scale} (default 1.0)
 * multiplies the transactions per cell (20,000 single-row, 200 of 1,000 rows).
 */
public final class CaptureDesignBenchmark {

    /** A way of capturing a table's changes: how to install it on a fresh table. */
    private record Variant(String label, String description, Installer installer) {
    }

    @FunctionalInterface
    private interface Installer {
        void install(DataSource admin, String table) throws SQLException;
    }

    /** A statement run once per transaction on {table}; $1 is the first key, $2 the last. */
    private record Cell(String label, String sql, int rows, int transactions) {
    }

    private static final long UPDATE_ROWS = 100_000;
    private static final long DELETE_FIRST = 10_000_000;
    private static final long INSERT_FIRST = 1_000_000_000L;

    /** The version expression of Tidemark's capture, so that every probe pays for the same version. */
    private static final String VERSION = "GREATEST(pg_catalog.pg_current_xact_id()::pg_catalog.text::bigint,"
            + " pg_catalog.pg_snapshot_xmax(pg_catalog.pg_current_snapshot())::pg_catalog.text::bigint - 1)";

    private static final List<Variant> VARIANTS = List.of(
            new Variant("plain", "no trigger: the baseline", (admin, table) -> { }),
            new Variant("full image", "Tidemark's generated capture, CaptureShape.FULL_IMAGE, wake-ups on",
                    (admin, table) -> PostgresOutbox.forTable("public." + table).build().install(admin)),
            new Variant("keys", "Tidemark's generated capture, CaptureShape.KEYS, wake-ups on",
                    (admin, table) -> PostgresOutbox.forTable("public." + table).capture(CaptureShape.KEYS).build()
                            .install(admin)),
            new Variant("keys, no wake-ups", "the same with notifications(false)",
                    (admin, table) -> PostgresOutbox.forTable("public." + table).capture(CaptureShape.KEYS)
                            .notifications(false).build().install(admin)),
            new Variant("probe: row per change", "statement triggers, one outbox row (version, xid, op, key) per"
                    + " changed row, primary key (version, id); no $changed, no wake-up, no key-change pairing",
                    (admin, table) -> installRowPerChange(admin, table, false)),
            new Variant("probe: row per change, BRIN", "the same with a BRIN index on version instead of the"
                    + " primary key", (admin, table) -> installRowPerChange(admin, table, true)),
            new Variant("probe: row per statement", "statement triggers, one outbox row per statement holding the"
                    + " keys as an array; no $changed, no wake-up", CaptureDesignBenchmark::installRowPerStatement),
            new Variant("probe: row triggers", "AFTER ... FOR EACH ROW triggers, one outbox row per changed row"
                    + " with $changed from binary comparisons of old and new; no wake-up",
                    CaptureDesignBenchmark::installRowTriggers));

    private CaptureDesignBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 3;
        double scale = args.length > 1 ? Double.parseDouble(args[1]) : 1.0;
        int single = (int) (20_000 * scale);
        int thousands = Math.max(2, (int) (200 * scale));
        List<Cell> cells = List.of(
                new Cell("single-row INSERT", "INSERT INTO {table} " + generatedRows(), 1, single),
                new Cell("single-row UPDATE", "UPDATE {table} SET qty = qty + 1, updated_at = now() WHERE id = $1", 1,
                        single),
                new Cell("single-row DELETE", "DELETE FROM {table} WHERE id = $1", 1, single),
                new Cell("INSERT of 1,000 rows", "INSERT INTO {table} " + generatedRows(), 1000, thousands),
                new Cell("UPDATE of 1,000 rows",
                        "UPDATE {table} SET qty = qty + 1, updated_at = now() WHERE id BETWEEN $1 AND $2", 1000, thousands),
                new Cell("DELETE of 1,000 rows", "DELETE FROM {table} WHERE id BETWEEN $1 AND $2", 1000, thousands));
        long deletesPerRound = (long) single + 1000L * thousands;
        long started = System.nanoTime();
        String load = CaptureBench.loadAverage();
        try (BenchServer server = BenchServer.fast()) {
            DataSource admin = server.admin();
            CaptureBench.execute(admin, LOOP_PROCEDURE);
            List<String> tables = new ArrayList<>();
            for (int i = 0; i < VARIANTS.size(); i++) {
                String table = "cd_" + i;
                CaptureBench.execute(admin, "CREATE TABLE public." + table + " (" + CaptureBench.COLUMNS + ")");
                CaptureBench.execute(admin, "ALTER TABLE public." + table + " SET (autovacuum_enabled = off)");
                seed(admin, table, 1, UPDATE_ROWS);
                seed(admin, table, DELETE_FIRST, DELETE_FIRST + deletesPerRound * (rounds + 1) - 1);
                VARIANTS.get(i).installer().install(admin, table);
                CaptureBench.execute(admin, "VACUUM ANALYZE public." + table);
                tables.add(table);
            }
            // cpu.get(cell).get(variant): microseconds of backend CPU per transaction, one per measured round
            Map<String, Map<String, List<Double>>> cpu = new LinkedHashMap<>();
            long[] nextInsert = new long[VARIANTS.size()];
            long[] nextDelete = new long[VARIANTS.size()];
            java.util.Arrays.fill(nextInsert, INSERT_FIRST);
            java.util.Arrays.fill(nextDelete, DELETE_FIRST);
            for (int round = 0; round <= rounds; round++) {
                boolean warmUp = round == 0;
                for (int c = 0; c < cells.size(); c++) {
                    Cell cell = cells.get(c);
                    int transactions = warmUp ? Math.max(2, cell.transactions() / 10) : cell.transactions();
                    for (int k = 0; k < VARIANTS.size(); k++) {
                        int v = (k + c + round) % VARIANTS.size(); // who goes first rotates
                        String table = tables.get(v);
                        emptyOutbox(admin, table);
                        long first;
                        long step = cell.rows();
                        if (cell.sql().startsWith("INSERT")) {
                            first = nextInsert[v];
                            nextInsert[v] += (long) transactions * step;
                        } else if (cell.sql().startsWith("DELETE")) {
                            first = nextDelete[v];
                            nextDelete[v] += (long) transactions * step;
                        } else {
                            first = 1; // updates walk the seeded keys, wrapping around
                        }
                        double micros = run(server, cell.sql().replace("{table}", "public." + table),
                                first, step, transactions);
                        if (!warmUp) {
                            cpu.computeIfAbsent(cell.label(), x -> new LinkedHashMap<>())
                                    .computeIfAbsent(VARIANTS.get(v).label(), x -> new ArrayList<>()).add(micros);
                        }
                    }
                }
                System.out.println(warmUp ? "warm-up done" : "round " + round + " of " + rounds + " done");
            }
            report(server, cpu, rounds, single, thousands, load, started);
        }
    }

    /**
     * Runs {@code transactions} transactions of one statement in one backend and returns that backend's CPU per
     * transaction in microseconds. The procedure commits after every statement, so each is its own transaction, as
     * an application's would be.
     */
    private static double run(BenchServer server, String sql, long first, long step, int transactions)
            throws Exception {
        try (Connection c = server.dataSource("capture-design").getConnection();
                CallableStatement call = c.prepareCall("CALL public.cd_loop(?, ?, ?, ?)")) {
            c.setAutoCommit(true);
            int pid = CaptureBench.backendPid(c);
            call.setString(1, sql);
            call.setLong(2, first);
            call.setLong(3, step);
            call.setInt(4, transactions);
            long before = ProcStat.cpuMillis(pid);
            call.execute();
            long after = ProcStat.cpuMillis(pid);
            return (after - before) * 1000.0 / transactions;
        }
    }

    /**
     * The loop: key range i of the statement is [first + i * step, first + (i + 1) * step - 1]; updates (first 1)
     * wrap around within the seeded keys. A procedure, so that it may COMMIT between statements.
     */
    private static final String LOOP_PROCEDURE = """
            CREATE PROCEDURE public.cd_loop(stmt text, first bigint, step bigint, transactions integer)
            LANGUAGE plpgsql AS $loop$
            DECLARE
                lo bigint;
            BEGIN
                FOR i IN 0 .. transactions - 1 LOOP
                    IF first = 1 THEN
                        lo := 1 + (i::bigint * 7919 * step) %% (%d - step);
                    ELSE
                        lo := first + i::bigint * step;
                    END IF;
                    EXECUTE stmt USING lo, lo + step - 1;
                    COMMIT;
                END LOOP;
            END
            $loop$""".formatted(UPDATE_ROWS);

    /** The benchmark row for each key of [$1, $2], as the other capture benchmarks write it. */
    private static String generatedRows() {
        return CaptureBench.GENERATED_ROWS.replace("?::bigint, ?::bigint", "$1::bigint, $2::bigint");
    }

    private static void seed(DataSource admin, String table, long from, long to) throws SQLException {
        CaptureBench.execute(admin, "INSERT INTO public." + table + " "
                + CaptureBench.GENERATED_ROWS.replace("?::bigint, ?::bigint", from + "::bigint, " + to + "::bigint"));
    }

    private static void emptyOutbox(DataSource admin, String table) throws SQLException {
        CaptureBench.execute(admin, """
                DO $empty$
                BEGIN
                    IF pg_catalog.to_regclass('public.%1$s_outbox') IS NOT NULL THEN
                        TRUNCATE public.%1$s_outbox;
                    END IF;
                END
                $empty$""".formatted(table));
    }

    // ---- design probes ----------------------------------------------------------------------------------------

    private static void installRowPerChange(DataSource admin, String table, boolean brin) throws SQLException {
        CaptureBench.execute(admin, """
                CREATE TABLE public.%1$s_outbox (
                    version bigint NOT NULL,
                    id      bigint GENERATED ALWAYS AS IDENTITY,
                    xact_id xid8   NOT NULL,
                    operation char(1) NOT NULL,
                    key_1   bigint NOT NULL);
                %2$s;
                CREATE FUNCTION public.%1$s_probe() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $probe$
                BEGIN
                    IF TG_OP = 'DELETE' THEN
                        INSERT INTO public.%1$s_outbox (version, xact_id, operation, key_1)
                        SELECT %3$s, pg_catalog.pg_current_xact_id(), 'D', r.id FROM changed_rows AS r;
                    ELSE
                        INSERT INTO public.%1$s_outbox (version, xact_id, operation, key_1)
                        SELECT %3$s, pg_catalog.pg_current_xact_id(), pg_catalog.left(TG_OP, 1), r.id
                          FROM changed_rows AS r;
                    END IF;
                    RETURN NULL;
                END
                $probe$;
                """.formatted(table, brin
                        ? "CREATE INDEX ON public." + table + "_outbox USING brin (version)"
                        : "ALTER TABLE public." + table + "_outbox ADD PRIMARY KEY (version, id)", VERSION)
                + statementTriggers(table));
    }

    private static void installRowPerStatement(DataSource admin, String table) throws SQLException {
        CaptureBench.execute(admin, """
                CREATE TABLE public.%1$s_outbox (
                    version bigint NOT NULL,
                    id      bigint GENERATED ALWAYS AS IDENTITY,
                    xact_id xid8   NOT NULL,
                    operation char(1) NOT NULL,
                    keys    bigint[] NOT NULL,
                    PRIMARY KEY (version, id));
                CREATE FUNCTION public.%1$s_probe() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $probe$
                BEGIN
                    INSERT INTO public.%1$s_outbox (version, xact_id, operation, keys)
                    SELECT %2$s, pg_catalog.pg_current_xact_id(), pg_catalog.left(TG_OP, 1), k.keys
                      FROM (SELECT pg_catalog.array_agg(r.id) AS keys FROM changed_rows AS r) AS k
                     WHERE k.keys IS NOT NULL;
                    RETURN NULL;
                END
                $probe$;
                """.formatted(table, VERSION) + statementTriggers(table));
    }

    /** Statement triggers whose transition table is called changed_rows whatever the operation. */
    private static String statementTriggers(String table) {
        return """
                CREATE TRIGGER %1$s_probe_insert AFTER INSERT ON public.%1$s REFERENCING NEW TABLE AS changed_rows
                    FOR EACH STATEMENT EXECUTE FUNCTION public.%1$s_probe();
                CREATE TRIGGER %1$s_probe_update AFTER UPDATE ON public.%1$s REFERENCING NEW TABLE AS changed_rows
                    FOR EACH STATEMENT EXECUTE FUNCTION public.%1$s_probe();
                CREATE TRIGGER %1$s_probe_delete AFTER DELETE ON public.%1$s REFERENCING OLD TABLE AS changed_rows
                    FOR EACH STATEMENT EXECUTE FUNCTION public.%1$s_probe();
                """.formatted(table);
    }

    private static void installRowTriggers(DataSource admin, String table) throws SQLException {
        StringBuilder changed = new StringBuilder();
        for (String column : List.of("sku", "name", "warehouse", "qty", "price", "status", "updated_at")) {
            changed.append("""
                        IF NOT ((ROW(OLD.%1$s)::record) OPERATOR(pg_catalog.*=) (ROW(NEW.%1$s)::record)) THEN
                            changed := changed || '%1$s'::text;
                        END IF;
                    """.formatted(column));
        }
        CaptureBench.execute(admin, """
                CREATE TABLE public.%1$s_outbox (
                    version bigint NOT NULL,
                    id      bigint GENERATED ALWAYS AS IDENTITY,
                    xact_id xid8   NOT NULL,
                    operation char(1) NOT NULL,
                    changed text[],
                    key_1   bigint NOT NULL,
                    PRIMARY KEY (version, id));
                CREATE FUNCTION public.%1$s_probe() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $probe$
                DECLARE
                    changed text[];
                BEGIN
                    IF TG_OP = 'UPDATE' THEN
                %3$s
                        IF changed IS NULL THEN
                            RETURN NULL;
                        END IF;
                    END IF;
                    INSERT INTO public.%1$s_outbox (version, xact_id, operation, changed, key_1)
                    VALUES (%2$s, pg_catalog.pg_current_xact_id(), pg_catalog.left(TG_OP, 1), changed,
                            CASE WHEN TG_OP = 'DELETE' THEN OLD.id ELSE NEW.id END);
                    RETURN NULL;
                END
                $probe$;
                CREATE TRIGGER %1$s_probe AFTER INSERT OR UPDATE OR DELETE ON public.%1$s
                    FOR EACH ROW EXECUTE FUNCTION public.%1$s_probe();
                """.formatted(table, VERSION, changed));
    }

    // ---- report ------------------------------------------------------------------------------------------------

    private static void report(BenchServer server, Map<String, Map<String, List<Double>>> cpu, int rounds, int single,
            int thousands, String loadBefore, long started) throws SQLException {
        System.out.printf(Locale.ROOT, "%nCapture design probes: %s, %d rounds, %,d single-row and %,d 1,000-row"
                        + " transactions per cell and variant; load average %s before, %s after; %d s in all%n%n",
                server.describe(), rounds, single, thousands, loadBefore, CaptureBench.loadAverage(),
                (System.nanoTime() - started) / 1_000_000_000L);
        System.out.println("Database CPU per transaction, microseconds (median over the rounds), and what the"
                + " capture adds over plain per changed row.");
        System.out.println();
        StringBuilder header = new StringBuilder("| variant |");
        StringBuilder rule = new StringBuilder("|---|");
        for (String cell : cpu.keySet()) {
            header.append(' ').append(cell).append(" | added per row |");
            rule.append("---:|---:|");
        }
        System.out.println(header);
        System.out.println(rule);
        for (Variant variant : VARIANTS) {
            StringBuilder line = new StringBuilder("| " + variant.label() + " |");
            for (Map.Entry<String, Map<String, List<Double>>> cell : cpu.entrySet()) {
                double median = CaptureBench.median(cell.getValue().get(variant.label()));
                double plain = CaptureBench.median(cell.getValue().get("plain"));
                int rows = cell.getKey().contains("1,000") ? 1000 : 1;
                line.append(String.format(Locale.ROOT, " %,.1f | %+.2f |", median, (median - plain) / rows));
            }
            System.out.println(line);
        }
        System.out.println();
        for (Variant variant : VARIANTS) {
            System.out.println("- " + variant.label() + ": " + variant.description());
        }
    }
}
