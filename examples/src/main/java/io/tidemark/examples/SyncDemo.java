package io.tidemark.examples;

import io.tidemark.postgres.PostgresOutbox;
import io.tidemark.postgres.PostgresProvider;
import io.tidemark.sync.Change;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.SyncEngine;
import io.tidemark.testing.EmbeddedPostgresServer;
import io.tidemark.testing.TestDatabase;

import javax.sql.DataSource;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The README's demo: an {@code items} table on an embedded PostgreSQL with Tidemark's generated outbox (capture
 * triggers and a gap-free change function), a {@link SyncEngine} polling it in the background and woken by
 * LISTEN/NOTIFY, and a destination that prints each batch while the demo inserts, updates and deletes rows.
 *
 * <p>Run it with {@code mvn -B -Pdemo -DskipTests -pl examples -am verify}.
 */
public final class SyncDemo {

    private final PrintStream out;
    private final Semaphore delivered = new Semaphore(0);

    SyncDemo(PrintStream out) {
        this.out = out;
    }

    @SuppressWarnings("try") // the server is held to be closed, never read
    public static void main(String[] args) throws Exception {
        System.out.println("Starting an embedded PostgreSQL (the first run unpacks the server)...");
        // Stopped before main returns: under mvn exec:java its exit hook would run after the plugin has closed
        // the class loader it needs. Started here, so a failure to start is not met by a second attempt.
        try (EmbeddedPostgresServer server = EmbeddedPostgresServer.shared()) {
            new SyncDemo(System.out).run();
        }
    }

    void run() throws Exception {
        try (TestDatabase database = EmbeddedPostgresServer.shared().createDatabase()) {
            DataSource dataSource = database.dataSource();
            execute(dataSource, "CREATE TABLE public.items (item_code text PRIMARY KEY, description text,"
                    + " price numeric(10, 2))");
            PostgresOutbox outbox = PostgresOutbox.forTable("public.items")
                    .payloadKey("item_code", "ItemCode")
                    .payloadKey("description", "Description")
                    .payloadKey("price", "Price")
                    .build();
            outbox.install(dataSource);
            out.println("Created public.items and installed its outbox: capture triggers into "
                    + outbox.outboxTable() + ", change function " + outbox.changeFunction() + "(json).");

            JdbcWatermarkStore watermarks = JdbcWatermarkStore.create(dataSource);
            try (SyncEngine engine = SyncEngine.builder()
                    .provider(PostgresProvider.create(dataSource))
                    .watermarks(watermarks)
                    .track(outbox.track("Items")
                            .initialSync(InitialSync.INCREMENTAL)
                            .pollInterval(Duration.ofSeconds(30)))   // the safety net: LISTEN wakes it at once
                    .destination("console", this::print)
                    .build()) {

                engine.runOnce();
                out.println("Seeded: " + engine.status("Items").stored());
                explainVersions(engine.status("Items").stored().version().orElse(0));
                engine.start();

                step(dataSource, "insert three items",
                        "INSERT INTO public.items VALUES ('A-100', 'Widget', 9.99), ('A-200', 'Gadget', 24.50),"
                                + " ('A-300', 'Gizmo', 5.00)", 3);
                step(dataSource, "update one price and clear one description",
                        "UPDATE public.items SET price = 10.49 WHERE item_code = 'A-100';"
                                + "UPDATE public.items SET description = NULL WHERE item_code = 'A-200'", 2);
                step(dataSource, "delete an item", "DELETE FROM public.items WHERE item_code = 'A-300'", 1);
            }
            // Closing lets the running cycle finish, so the watermark of the last delivery is stored by now.
            out.println();
            out.println("Stored after close: " + watermarks.load("Items").orElseThrow());
        }
        out.println("Engine closed, database dropped. Done.");
    }

    /**
     * The numbers in the output are versions, and they look arbitrary (they start near wherever this server's
     * transaction counter stands and jump by two or three), so the demo says what they are before showing them.
     */
    private void explainVersions(long seededAt) {
        out.println();
        out.println("About the version numbers (v" + seededAt + " above, v... below): a version is the PostgreSQL"
                + " transaction id of the commit that made the change.");
        out.println("  The generated outbox orders changes that way, so that no change committed late can be skipped.");
        out.println("  They are not consecutive: the ids in between belong to other transactions, including the engine's"
                + " own calls and watermark writes.");
        out.println("  The engine stores the highest version delivered and asks for the changes after it.");
    }

    private void step(DataSource dataSource, String what, String sql, int expectedChanges) throws Exception {
        out.println();
        out.println("== " + what);
        execute(dataSource, sql);
        if (!delivered.tryAcquire(expectedChanges, 30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("The engine did not deliver " + expectedChanges + " changes within 30 s");
        }
    }

    private void print(ChangeBatch batch) {
        out.printf("-> %s page %d/%d, %s (reason %d), versions %d..%d, %d change(s)%n", batch.objectName(),
                batch.pageNumber(), batch.pageCount(), batch.syncType(), batch.reasonCode(), batch.fromVersion(),
                batch.toVersion(), batch.changes().size());
        for (Change change : batch.changes()) {
            out.printf("     %s v%d %s%s%n", change.operation().map(Enum::name).orElse("?"),
                    change.version().orElse(-1), change.fields(),
                    change.changedColumns().map(c -> " changed " + c).orElse(""));
        }
        delivered.release(batch.changes().size());
    }

    private static void execute(DataSource dataSource, String sql) throws SQLException {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

}
