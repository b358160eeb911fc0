package io.tidemark.postgres;

import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.testing.ContractReport;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.ProcedureContractVerifier;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The contract verifier's scenarios read through the providers, as the engine reads: the log-based capture, which has
 * no change function to hand the verifier, and the outbox through {@link PostgresProvider}, whose function the
 * verifier also reads directly (OutboxContractTest).
 */
@EmbeddedPostgresTest
class ProviderContractTest {

    private static final String TABLE = "CREATE TABLE public.%s (item_code text PRIMARY KEY, description text,"
            + " price numeric NOT NULL)";

    private final TestDatabase database;
    private final LogicalCaptures captures;

    ProviderContractTest(TestDatabase database) {
        this.database = database;
        this.captures = new LogicalCaptures(database, JdbcWatermarkStore.create(database.dataSource()));
    }

    @AfterEach
    void dropSlot() throws Exception {
        captures.close();
    }

    @Test
    void the_log_based_capture_is_safe_on_every_scenario() {
        database.execute(TABLE.formatted("cv_logical"));
        PostgresLogicalCapture capture = captures.install(PostgresLogicalCapture.forTables("public.cv_logical"));
        PostgresLogicalProvider provider = captures.provider(captures.builder(capture));

        ContractReport report = items(ProcedureContractVerifier.forProvider(database.dataSource(), provider,
                        capture.track("Items", "public.cv_logical"))
                .beforeEachRead(() -> provider.awaitCaughtUp(Duration.ofSeconds(10))), "cv_logical", "item_code",
                "description")
                .verify();

        report.assertSafe();
        assertThat(report.scenarios()).hasSize(10);
    }

    @Test
    void the_outbox_read_through_its_provider_is_safe_as_its_function_is() {
        database.execute(TABLE.formatted("cv_outbox"));
        PostgresOutbox outbox = PostgresOutbox.forTable("public.cv_outbox").build();
        outbox.install(database.dataSource());

        ContractReport report = items(ProcedureContractVerifier.forProvider(database.dataSource(),
                PostgresProvider.create(database.dataSource()), outbox.track("Items")), "cv_outbox", "item_code",
                "description")
                .verify();

        report.assertSafe();
        assertThat(report.scenarios()).hasSize(10);
    }

    private static ProcedureContractVerifier.Builder items(ProcedureContractVerifier.Builder verifier, String table,
                                                           String keyField, String clearedField) {
        return verifier.keyField(keyField)
                .insert("INSERT INTO public." + table + " (item_code, description, price) VALUES (?, 'created', 1)")
                .update("UPDATE public." + table + " SET price = price + 1 WHERE item_code = ?")
                .clear("UPDATE public." + table + " SET description = NULL WHERE item_code = ?", clearedField)
                .delete("DELETE FROM public." + table + " WHERE item_code = ?");
    }
}
