package io.tidemark.postgres;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.CallContext;
import io.tidemark.sync.spi.ChangeRequest;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import io.tidemark.testing.UnreachableDatabase;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * A database that cannot be reached, or that refuses the login, is reported as {@link ErrorCode#CONNECTION_FAILED}
 * naming the target, wherever Tidemark meets it first: the provider's call and the outbox installer. Before the
 * shared mapping these were {@code PROCEDURE_FAILED} and {@code INTERNAL}.
 */
@EmbeddedPostgresTest
class ConnectionFailureTest {

    private static final TrackedObject ITEMS = TrackedObject.of("Items", "public.items_changes");

    private final TestDatabase database;

    ConnectionFailureTest(TestDatabase database) {
        this.database = database;
    }

    @Test
    void a_call_to_a_closed_port_is_a_connection_failure_that_names_the_url_without_the_password() {
        DataSource closed = UnreachableDatabase.postgres();
        TidemarkException e = catchThrowableOfType(TidemarkException.class,
                () -> PostgresProvider.builder(closed).listen(false).build()
                        .invoke(ITEMS, ChangeRequest.sync(0), CallContext.none()));
        assertThat(e.code()).isEqualTo(ErrorCode.CONNECTION_FAILED);
        assertThat(e.objectName()).contains("Items");
        assertThat(e.getMessage())
                .startsWith("[Items] could not connect to jdbc:postgresql://127.0.0.1:")
                .contains("while calling public.items_changes")
                .contains("Check the JDBC URL, the credentials and the network")
                .doesNotContain(UnreachableDatabase.PASSWORD);
    }

    @Test
    void installing_an_outbox_on_a_closed_port_is_a_connection_failure() {
        DataSource closed = UnreachableDatabase.postgres();
        TidemarkException e = catchThrowableOfType(TidemarkException.class,
                () -> PostgresOutbox.forTable("public.items").build()
                        .install(closed));
        assertThat(e.code()).isEqualTo(ErrorCode.CONNECTION_FAILED);
        assertThat(e.getMessage())
                .startsWith("Could not connect to jdbc:postgresql://127.0.0.1:")
                .contains("while trying to install the outbox of public.items")
                .contains("Check the JDBC URL, the credentials and the network")
                .doesNotContain(UnreachableDatabase.PASSWORD);
    }

    @Test
    void a_login_the_server_refuses_is_a_connection_failure_that_says_credentials() {
        DataSource stranger = database.dataSourceFor("no_such_login", UnreachableDatabase.PASSWORD);
        TidemarkException call = catchThrowableOfType(TidemarkException.class,
                () -> PostgresProvider.builder(stranger).listen(false).build()
                        .invoke(ITEMS, ChangeRequest.sync(0), CallContext.none()));
        assertThat(call.code()).isEqualTo(ErrorCode.CONNECTION_FAILED);
        assertThat(call.getMessage()).contains("could not log in to jdbc:postgresql://localhost:" + database.port())
                .contains("no_such_login").contains("Check the credentials (user name and password)")
                .doesNotContain(UnreachableDatabase.PASSWORD);

        TidemarkException install = catchThrowableOfType(TidemarkException.class,
                () -> PostgresOutbox.forTable("public.items").build()
                        .install(stranger));
        assertThat(install.code()).isEqualTo(ErrorCode.CONNECTION_FAILED);
        assertThat(install.getMessage()).contains("Check the credentials");
    }
}
