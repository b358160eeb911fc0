package io.tidemark.examples.readme;

import io.tidemark.history.HistoryStorage;
import io.tidemark.history.TemporalTable;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * history-trigger/README.md, "Storage": the snippet that picks {@code CURRENT_IN_TABLE}, run as written on a table of
 * its own (ReadmeSnippetsTest checks it is verbatim). Its own class, so its own database: the other history snippets
 * install the default shape on a table of the same name.
 */
@EmbeddedPostgresTest
class HistoryStorageSnippetTest {

    @Test
    void the_current_in_table_snippet_keeps_the_current_version_in_the_table(DataSource dataSource,
                                                                               TestDatabase database) throws Exception {
        database.execute("CREATE TABLE public.policies (id bigint PRIMARY KEY, premium numeric NOT NULL)");
        database.execute("INSERT INTO public.policies (id, premium) VALUES (1, 100)");

        // tag::h-storage[]
        TemporalTable policies = TemporalTable.forTable("public.policies")
                .storage(HistoryStorage.CURRENT_IN_TABLE)    // default: HistoryStorage.HISTORY_TABLE
                .build();
        // end::h-storage[]
        policies.install(dataSource);
        policies.verify(dataSource).assertClean();
        database.execute("UPDATE public.policies SET premium = 120 WHERE id = 1");

        // The superseded version is archived; the view shows it closed and the row as the open version.
        List<String> versions = new ArrayList<>();
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT premium, valid_to = 'infinity' FROM public.policies_history"
                     + " ORDER BY valid_from, history_id NULLS LAST")) {
            while (rs.next()) {
                versions.add(rs.getBigDecimal(1).toPlainString() + (rs.getBoolean(2) ? " open" : " closed"));
            }
        }
        assertThat(versions).containsExactly("100 closed", "120 open");
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT count(*) FROM public.policies_history_closed")) {
            rs.next();
            assertThat(rs.getLong(1)).as("rows in the archive of superseded versions").isEqualTo(1);
        }
    }
}
