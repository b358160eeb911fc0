package io.tidemark.sqlserver;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.CallContext;
import io.tidemark.sync.spi.ChangeProvider;
import io.tidemark.sync.spi.ChangeRequest;
import io.tidemark.testing.UnreachableDatabase;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * SQL Server that cannot be reached, without a server: mssql-jdbc itself tries a loopback port nothing listens on
 * and reports "The TCP/IP connection to the host ... has failed" (SQLState 08S01). The provider's call, the setup
 * scripts and the preflight all report it as {@link ErrorCode#CONNECTION_FAILED} naming the target (before:
 * {@code PROCEDURE_FAILED} and {@code SCHEMA_UNSUPPORTED}). Login failures (error 18456) are covered in
 * {@code SqlServerErrorsTest}.
 */
class ConnectionFailureTest {

    private static final TrackedObject ITEMS = TrackedObject.of("Items", "dbo.get_item_changes");

    @Test
    void a_call_to_a_closed_port_is_a_connection_failure_naming_the_url_without_the_password() {
        SqlServerProvider provider = SqlServerProvider.create(UnreachableDatabase.sqlServer());
        TidemarkException e = catchThrowableOfType(TidemarkException.class,
                () -> provider.invoke(ITEMS, ChangeRequest.sync(1),
                CallContext.none()));
        assertThat(e.code()).isEqualTo(ErrorCode.CONNECTION_FAILED);
        assertThat(e.objectName()).contains("Items");
        assertThat(e.getMessage())
                .startsWith("[Items] could not connect to jdbc:sqlserver://127.0.0.1:")
                .contains("while calling dbo.get_item_changes")
                .contains("Check the JDBC URL, the credentials and the network")
                .doesNotContain(UnreachableDatabase.PASSWORD);
    }

    @Test
    void the_reachability_probe_reports_a_closed_port_as_unreachable_within_its_timeout() {
        long started = System.nanoTime();
        ChangeProvider.Reachability answer = SqlServerProvider.create(UnreachableDatabase.sqlServer())
                .probe(Duration.ofSeconds(5));
        assertThat(answer).isEqualTo(ChangeProvider.Reachability.UNREACHABLE);
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(10));
    }

    @Test
    void installing_a_setup_script_on_a_closed_port_is_a_connection_failure() {
        TidemarkException e = catchThrowableOfType(TidemarkException.class,
                () -> LeastPrivilegeRole.named("tidemark_sync")
                        .procedure("dbo.get_item_changes").build().install(UnreachableDatabase.sqlServer()));
        assertThat(e.code()).isEqualTo(ErrorCode.CONNECTION_FAILED);
        assertThat(e.getMessage()).startsWith("Could not connect to jdbc:sqlserver://127.0.0.1:")
                .contains("while installing role [tidemark_sync]").doesNotContain(UnreachableDatabase.PASSWORD);
    }

    @Test
    void the_preflight_reports_a_closed_port_as_a_connection_failure() {
        PreflightReport report = SqlServerProvider.create(UnreachableDatabase.sqlServer()).preflight(ITEMS);
        assertThat(report.failures()).singleElement().satisfies(check -> {
            assertThat(check.code()).contains(ErrorCode.CONNECTION_FAILED);
            assertThat(check.message()).startsWith("Could not connect to jdbc:sqlserver://127.0.0.1:")
                    .doesNotContain(UnreachableDatabase.PASSWORD);
        });
    }
}
