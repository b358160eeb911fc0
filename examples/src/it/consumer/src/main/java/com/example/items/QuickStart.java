package com.example.items;

// tag::quickstart[]
import io.tidemark.postgres.PostgresOutbox;
import io.tidemark.postgres.PostgresProvider;
import io.tidemark.sync.Change;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.SyncReport;
import io.tidemark.sync.TrackedObject;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

public class QuickStart {

    /** From an empty database to a delivered change. Pass your application's DataSource (any pool). */
    public static List<Change> run(DataSource dataSource) throws SQLException {
        // 1. A table. In your application it exists already.
        execute(dataSource, "CREATE TABLE public.items (item_code text PRIMARY KEY, description text)");

        // 2. Tidemark's outbox for it: capture triggers, and the change function public.items_changes(json)
        //    whose JSON keys are the column names (payloadKey("item_code", "ItemCode") renames one).
        PostgresOutbox outbox = PostgresOutbox.forTable("public.items").build();
        outbox.install(dataSource);                           // idempotent; outbox.script(dataSource) prints the SQL

        // 3. The engine: calls the change function, hands the changes to the destination, then stores a watermark.
        List<Change> delivered = new CopyOnWriteArrayList<>();
        try (SyncEngine engine = SyncEngine.builder()
                .provider(PostgresProvider.create(dataSource))      // SELECT public.items_changes(?::json)
                .watermarks(JdbcWatermarkStore.create(dataSource))  // table tidemark.sync_state, created if missing
                .track(TrackedObject.of("Items", "public.items_changes")
                        .initialSync(InitialSync.INCREMENTAL))      // start from now; FULL exports everything first
                .destination("console", batch -> {
                    for (Change change : batch.changes()) {
                        System.out.println(change.operation().orElseThrow() + " "
                                + change.field("item_code").orElseThrow().asText());   // INSERT A-100
                        delivered.add(change);
                    }
                })
                .build()) {
            engine.runOnce();                                 // the first cycle records where "now" is: SEEDED

            // 4. A change, and the cycle that delivers it.
            execute(dataSource, "INSERT INTO public.items VALUES ('A-100', 'Widget')");
            SyncReport report = engine.runOnce();             // engine.start() polls in the background instead
            System.out.println(report.get("Items").outcome()); // DELIVERED
        }
        return delivered;
    }

    private static void execute(DataSource dataSource, String sql) throws SQLException {
        try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }
}
// end::quickstart[]
