package io.tidemark.history;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import io.tidemark.testing.UnreachableDatabase;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The history installer and queries on a database that cannot be reached or refuses the login: one
 * {@link ErrorCode#CONNECTION_FAILED} naming the table and the target (before: {@code INTERNAL}).
 */
@EmbeddedPostgresTest
class ConnectionFailureTest {

    private static final TemporalTable POLICIES = TemporalTable.forTable("public.policies").build();

    private final TestDatabase database;

    ConnectionFailureTest(TestDatabase database) {
        this.database = database;
    }

    @Test
    void installing_on_a_closed_port_is_a_connection_failure_naming_table_and_url() {
        TidemarkException e = catchThrowableOfType(TidemarkException.class,
                () -> POLICIES.install(UnreachableDatabase.postgres()));
        assertThat(e.code()).isEqualTo(ErrorCode.CONNECTION_FAILED);
        assertThat(e.objectName()).contains("public.policies");
        assertThat(e.getMessage())
                .startsWith("[public.policies] could not connect to jdbc:postgresql://127.0.0.1:")
                .contains("Check the JDBC URL, the credentials and the network")
                .doesNotContain(UnreachableDatabase.PASSWORD);
    }

    @Test
    void queries_and_maintenance_on_a_closed_port_are_connection_failures() {
        DataSource closed = UnreachableDatabase.postgres();
        assertThat(catchThrowableOfType(TidemarkException.class, () -> POLICIES.queries(closed).asOf(Instant.now()))
                .code()).isEqualTo(ErrorCode.CONNECTION_FAILED);
        assertThat(catchThrowableOfType(TidemarkException.class, () -> POLICIES.verify(closed)).code())
                .isEqualTo(ErrorCode.CONNECTION_FAILED);
        assertThat(catchThrowableOfType(TidemarkException.class, () -> POLICIES.prune(closed, Instant.now())).code())
                .isEqualTo(ErrorCode.CONNECTION_FAILED);
    }

    @Test
    void a_refused_login_is_a_connection_failure_that_says_credentials() {
        TidemarkException e = catchThrowableOfType(TidemarkException.class, () -> POLICIES.install(
                database.dataSourceFor("no_such_login", UnreachableDatabase.PASSWORD)));
        assertThat(e.code()).isEqualTo(ErrorCode.CONNECTION_FAILED);
        assertThat(e.getMessage()).contains("could not log in to jdbc:postgresql://localhost:" + database.port())
                .contains("Check the credentials (user name and password)")
                .doesNotContain(UnreachableDatabase.PASSWORD);
    }

    @Test
    void pushing_context_on_a_connection_that_is_gone_is_a_connection_failure_not_an_internal_error()
            throws SQLException {
        Connection gone = database.dataSource().getConnection();
        gone.close();
        TidemarkException e = catchThrowableOfType(TidemarkException.class,
                () -> ContextualDataSource.push(gone, ChangeContext.builder().changedBy("u-1").build(), "tidemark"));
        assertThat(e.code()).isEqualTo(ErrorCode.CONNECTION_FAILED);
        assertThat(e.getMessage()).contains("while pushing the change context");
    }
}
