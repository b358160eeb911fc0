package io.tidemark.examples.readme;

import io.tidemark.history.ChangeContext;
import io.tidemark.history.HistoryQueries;
import io.tidemark.history.HistoryRow;
import io.tidemark.history.InvariantViolation;
import io.tidemark.history.TemporalTable;
import io.tidemark.history.jdbi.ChangeContextPlugin;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/** README.md, "History": the snippet run as written. ReadmeSnippetsTest checks that the README holds it verbatim. */
@EmbeddedPostgresTest
class HistorySnippetTest {

    @Test
    void the_history_snippet_records_versions_with_context(DataSource dataSource, TestDatabase database)
            throws Exception {
        database.execute("CREATE TABLE public.policies (id bigint PRIMARY KEY, premium numeric NOT NULL,"
                + " search_vector tsvector)");
        DataSource pool = dataSource;
        String requestId = "req-42";
        database.execute("INSERT INTO public.policies (id, premium) VALUES (1, 100)");

        // tag::history[]
        TemporalTable policies = TemporalTable.forTable("public.policies")
                .exclude("search_vector")                          // never versioned
                .retention(Duration.ofDays(7 * 365))
                .build();                                          // every option checked here
        policies.install(dataSource);                              // create, seed, enable: one transaction, table locked
        String sql = policies.script(dataSource);                  // the same installation as reviewed SQL (reads the catalog)
        policies.verify(dataSource).assertClean();                 // drift: hand-added column, missing index, changed function
        policies.evolve(dataSource);                               // repairs drift; a type change is refused

        ChangeContext context = ChangeContext.builder().changedBy("u-1042").changedByName("Ann Smith")
                .correlationId(requestId).reason("OPS-12 premium correction").extraJson("{\"ticket\":\"OPS-12\"}").build();
        Jdbi jdbi = Jdbi.create(pool).installPlugin(ChangeContextPlugin.create());   // or ContextualDataSource.wrap(pool)
        Instant beforeCorrection = Instant.now();
        ChangeContext.runWith(context, () -> jdbi.useHandle(h -> h.execute("UPDATE policies SET premium = 120 WHERE id = 1")));

        HistoryQueries history = policies.queries(dataSource);
        Optional<HistoryRow> then = history.asOf(beforeCorrection, 1L);   // also: all versions, with tombstones, windows, diff
        // and in SQL: SELECT * FROM public.policies_as_of('2026-01-01') JOIN ...
        policies.prune(dataSource);                                // closed versions older than the retention, in batches
        List<InvariantViolation> broken = policies.checkInvariants(dataSource);   // overlaps, gaps, negative periods, 2 open
        // end::history[]
        assertThat(sql).contains("policies_history");
        assertThat(then).hasValueSatisfying(row -> assertThat(row.value("premium")).hasToString("100"));
        assertThat(history.asOf(Instant.now(), 1L)).hasValueSatisfying(
                row -> assertThat(row.value("premium")).hasToString("120"));
        assertThat(broken).isEmpty();
    }
}
