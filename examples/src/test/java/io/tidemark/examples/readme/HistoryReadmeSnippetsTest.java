package io.tidemark.examples.readme;

import io.tidemark.history.ChangeContext;
import io.tidemark.history.ContextualDataSource;
import io.tidemark.history.HistoryQueries;
import io.tidemark.history.HistoryRow;
import io.tidemark.history.InstallReport;
import io.tidemark.history.PruneReport;
import io.tidemark.history.TemporalTable;
import io.tidemark.history.VersionDiff;
import io.tidemark.history.jdbi.ChangeContextPlugin;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/** history-trigger/README.md: its Java snippets, run as written (ReadmeSnippetsTest checks they are verbatim). */
@EmbeddedPostgresTest
class HistoryReadmeSnippetsTest {

    @Test
    void the_history_snippets_work_as_written(DataSource dataSource, TestDatabase database) throws Exception {
        database.execute("CREATE TABLE public.policies (id bigint PRIMARY KEY, premium numeric NOT NULL,"
                + " search_vector tsvector)");
        database.execute("INSERT INTO public.policies (id, premium) VALUES (1, 100)");
        DataSource pool = dataSource;
        String requestId = "req-7";
        PolicyRepository repository = new PolicyRepository();
        long policyId = 1L;
        long id = 1L;

        // tag::h-install[]
        TemporalTable policies = TemporalTable.forTable("public.policies")   // "policies" alone means public.policies
                .exclude("search_vector")                                    // never versioned (never a key column)
                .retention(Duration.ofDays(7 * 365))                         // for prune()
                .build();                                                    // everything is checked here

        InstallReport report = policies.install(dataSource);  // create, seed and enable, in one transaction
        String sql = policies.script(dataSource);             // the same installation as SQL, for Flyway / Liquibase
        policies.verify(dataSource).assertClean();            // throws SCHEMA_DRIFT listing every difference
        // end::h-install[]
        assertThat(sql).contains("policies_history");

        // tag::h-context[]
        ChangeContext context = ChangeContext.builder()
                .changedBy("u-1042").changedByName("Ann Smith")
                .correlationId(requestId).reason("OPS-12 premium correction")
                .extraJson("{\"ticket\": \"OPS-12\"}")            // must be a JSON object; checked here
                .build();
        // end::h-context[]
        Instant instant = Instant.now();
        {
            BigDecimal premium = new BigDecimal("130");
            // tag::h-contextual-datasource[]
            DataSource app = ContextualDataSource.wrap(pool);
            ChangeContext.runWith(context, () -> repository.updatePremium(app, policyId, premium));
            // end::h-contextual-datasource[]
        }
        {
            BigDecimal premium = new BigDecimal("140");
            // tag::h-jdbi[]
            Jdbi jdbi = Jdbi.create(pool).installPlugin(ChangeContextPlugin.create());
            ChangeContext.runWith(context, () -> jdbi.useTransaction(h -> h.execute("UPDATE policies SET premium = ? WHERE id = ?", premium, id)));
            // end::h-jdbi[]
        }
        Instant from = instant.minus(Duration.ofMinutes(1));
        Instant to = Instant.now();
        List<HistoryRow> chain = policies.queries(dataSource).versions(policyId);
        long olderId = chain.get(0).historyId();
        long newerId = chain.get(chain.size() - 1).historyId();

        // tag::h-queries[]
        HistoryQueries history = policies.queries(dataSource);
        List<HistoryRow> then = history.asOf(instant);                // the whole table at an instant
        Optional<HistoryRow> one = history.asOf(instant, policyId);   // one key (composite keys: all values, in key order)
        List<HistoryRow> versions = history.versions(policyId);       // every version, oldest first
        List<HistoryRow> all = history.history(policyId);             // versions and tombstones, with their context
        List<HistoryRow> touched = history.overlapping(from, to);     // valid at some instant of [from, to)
        List<HistoryRow> inside = history.containedIn(from, to);      // whole period inside [from, to]
        VersionDiff diff = history.diff(olderId, newerId);            // changed columns (compared by value: 1.0 = 1.00)
        // end::h-queries[]
        assertThat(one).hasValueSatisfying(row -> assertThat(row.value("premium")).hasToString("100"));
        assertThat(versions).hasSize(3);
        assertThat(all).hasSize(3);
        assertThat(then).hasSize(1);
        assertThat(touched).isNotEmpty();
        assertThat(diff).isNotNull();

        prune(policies, dataSource, Instant.now().minus(Duration.ofDays(1)));
    }

    private static void prune(TemporalTable policies, DataSource dataSource, Instant cutoff) {
        // tag::h-prune[]
        PruneReport report = policies.prune(dataSource);             // cutoff = clock.instant() - retention
        PruneReport upTo = policies.prune(dataSource, cutoff);       // or an explicit cutoff
        // end::h-prune[]
        assertThat(report).isNotNull();
        assertThat(upTo).isNotNull();
    }

    /** The application's own data access, as the ContextualDataSource snippet calls it. */
    static final class PolicyRepository {
        void updatePremium(DataSource dataSource, long policyId, BigDecimal premium) {
            try (Connection connection = dataSource.getConnection();
                 PreparedStatement update = connection.prepareStatement(
                         "UPDATE policies SET premium = ? WHERE id = ?")) {
                update.setBigDecimal(1, premium);
                update.setLong(2, policyId);
                update.executeUpdate();
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        }
    }
}
