package io.tidemark.history;

import io.tidemark.testing.EmbeddedPostgresExtension;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs the invariant checker on every temporal table registered in the test class's database after each test, so
 * every test of the suite also proves that what it did left a well-formed history.
 */
public final class InvariantsAfterEach implements AfterEachCallback {

    @Override
    public void afterEach(ExtensionContext context) {
        TestDatabase database = EmbeddedPostgresExtension.database(context);
        if (Db.count(database.dataSource(), "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid ="
                + " c.relnamespace WHERE n.nspname = 'tidemark' AND c.relname = 'temporal_tables'") == 0) {
            return;
        }
        List<Map<String, Object>> tables = Db.rows(database.dataSource(), "SELECT source_schema, source_table,"
                + " history_schema, history_table FROM tidemark.temporal_tables r WHERE EXISTS (SELECT 1 FROM pg_class c"
                + " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = r.source_schema"
                + " AND c.relname = r.source_table)");
        for (Map<String, Object> t : tables) {
            TemporalTable table = TemporalTable.forTable(quote(t.get("source_schema")) + "." + quote(t.get("source_table")))
                    .historyTable(quote(t.get("history_schema")) + "." + quote(t.get("history_table"))).build();
            assertThat(table.checkInvariants(database.dataSource()))
                    .as("history invariants of %s after %s", table.table(), context.getDisplayName())
                    .isEmpty();
        }
    }

    private static String quote(Object name) {
        return "\"" + name.toString().replace("\"", "\"\"") + "\"";
    }
}
