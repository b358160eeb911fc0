package io.tidemark.benchmarks.destinations.webhook;

import io.tidemark.postgres.PostgresOutbox;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The benchmark's source: a table {@code public.hook_items} with Tidemark's generated outbox, filled by ordinary
 * INSERTs in transactions of 1,000 rows after the seed version, so the engine reads it as an incremental engine
 * does. A change renders as about 130 bytes of JSON, as in the pipeline benchmark.
 */
final class WebhookSource {

    private final PostgresOutbox outbox;
    private final long seed;

    private WebhookSource(PostgresOutbox outbox, long seed) {
        this.outbox = outbox;
        this.seed = seed;
    }

    static WebhookSource create(DataSource dataSource, int changes) throws SQLException {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE public.hook_items (item_code text PRIMARY KEY, description text,"
                    + " price numeric(10,2))");
        }
        PostgresOutbox outbox = PostgresOutbox.forTable("public.hook_items")
                .payloadKey("item_code", "ItemCode")
                .payloadKey("description", "Description")
                .payloadKey("price", "Price")
                .build();
        outbox.install(dataSource);
        long seed;
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            try (ResultSet rs = s.executeQuery("SELECT (" + outbox.changeFunction()
                    + "('{\"fromVersion\":0,\"mode\":\"seed\"}') #>> '{Metadata,Sync,Version}')::bigint")) {
                rs.next();
                seed = rs.getLong(1);
            }
            c.setAutoCommit(true);
            for (int t = 0; t * 1000 < changes; t++) {
                s.execute("INSERT INTO public.hook_items (item_code, description, price)"
                        + " SELECT 'ITEM-' || lpad(g::text, 9, '0'), 'Item ' || g || ' of the product catalogue',"
                        + " (g % 10000) / 100.0 FROM generate_series(" + (t * 1000L + 1) + ", "
                        + Math.min(changes, (t + 1) * 1000L) + ") g");
            }
            s.execute("VACUUM ANALYZE public.hook_items, public.hook_items_outbox");
        }
        return new WebhookSource(outbox, seed);
    }

    String function() {
        return outbox.changeFunction();
    }

    /** The version before the first change: where an incremental reader starts. */
    long seed() {
        return seed;
    }
}
