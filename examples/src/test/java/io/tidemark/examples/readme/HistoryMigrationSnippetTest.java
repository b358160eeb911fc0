package io.tidemark.examples.readme;

import io.tidemark.history.HistoryStorage;
import io.tidemark.history.MigrationReport;
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
 * history-trigger/README.md, "Migrating a history table": the snippet run as written on a history installed with the
 * default shape (ReadmeSnippetsTest checks it is verbatim). Its own class, so its own database.
 */
@EmbeddedPostgresTest
class HistoryMigrationSnippetTest {

    @Test
    void the_migrate_snippet_converts_an_installed_history(DataSource dataSource, TestDatabase database)
            throws Exception {
        database.execute("CREATE TABLE public.policies (id bigint PRIMARY KEY, premium numeric NOT NULL)");
        database.execute("INSERT INTO public.policies (id, premium) VALUES (1, 100)");
        TemporalTable.forTable("public.policies").build().install(dataSource);
        database.execute("UPDATE public.policies SET premium = 120 WHERE id = 1");

        // tag::h-migrate[]
        MigrationReport report = TemporalTable.forTable("public.policies")
                .storage(HistoryStorage.CURRENT_IN_TABLE)
                .build()
                .migrate(dataSource);   // one transaction; does nothing when already CURRENT_IN_TABLE
        // end::h-migrate[]

        assertThat(report.migrated()).isTrue();
        assertThat(report.closedVersions()).isEqualTo(1);
        assertThat(report.currentVersions()).isEqualTo(1);
        List<String> versions = new ArrayList<>();
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT premium, valid_to = 'infinity' FROM public.policies_history"
                     + " ORDER BY valid_from")) {
            while (rs.next()) {
                versions.add(rs.getBigDecimal(1).toPlainString() + (rs.getBoolean(2) ? " open" : " closed"));
            }
        }
        assertThat(versions).as("the same versions, now read through the view").containsExactly("100 closed", "120 open");
    }
}
