package io.tidemark.postgres.outbox;

import io.tidemark.postgres.CaptureShape;
import io.tidemark.postgres.PostgresOutbox;
import io.tidemark.testing.ContractReport;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.ProcedureContractVerifier;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The contract verifier's verdict on Tidemark's generated change function: SAFE on every scenario. (Its verdict on
 * the identity-as-version function of docs/contract.md, UNSAFE on the in-flight interleaving, is tested with the
 * verifier in tidemark-testing, where the reference SQL is kept verbatim.)
 */
@EmbeddedPostgresTest
class OutboxContractTest {

    private final TestDatabase database;

    OutboxContractTest(TestDatabase database) {
        this.database = database;
    }

    /** The capture shape of every outbox this class installs; a subclass runs every test on another one. */
    CaptureShape shape() {
        return CaptureShape.FULL_IMAGE;
    }

    @Test
    void the_generated_function_is_safe_on_every_scenario() {
        database.execute("CREATE TABLE public.items (item_code text PRIMARY KEY, description text, price numeric NOT NULL)");
        PostgresOutbox outbox = PostgresOutbox.forTable("public.items").capture(shape())
                .payloadKey("item_code", "ItemCode")
                .payloadKey("description", "Description")
                .columns("description", "price")
                .build();
        outbox.install(database.dataSource());

        ContractReport report = verifier(outbox)
                .keyField("ItemCode")
                .insert("INSERT INTO public.items (item_code, description, price) VALUES (?, 'created', 1)")
                .update("UPDATE public.items SET price = price + 1 WHERE item_code = ?")
                .clear("UPDATE public.items SET description = NULL WHERE item_code = ?", "Description")
                .delete("DELETE FROM public.items WHERE item_code = ?")
                .verify();

        report.assertSafe();
        assertThat(report.scenarios()).hasSize(10);
    }

    @Test
    void the_generated_function_is_safe_with_a_numeric_key_and_every_column() {
        database.execute("CREATE TABLE public.accounts (id bigint PRIMARY KEY, owner text, balance numeric NOT NULL,"
                + " meta json)");
        PostgresOutbox outbox = PostgresOutbox.forTable("public.accounts").capture(shape()).build();
        outbox.install(database.dataSource());
        AtomicInteger keys = new AtomicInteger(1000);

        verifier(outbox)
                .keyField("id")
                .keys(() -> (long) keys.incrementAndGet())
                .insert((c, key) -> {
                    try (var s = c.prepareStatement("INSERT INTO public.accounts VALUES (?, 'ann', 10, '{\"a\": 1}')")) {
                        s.setObject(1, key);
                        s.execute();
                    }
                })
                .update("UPDATE public.accounts SET balance = balance - 1 WHERE id = ?")
                .clear("UPDATE public.accounts SET owner = NULL WHERE id = ?", "owner")
                .delete("DELETE FROM public.accounts WHERE id = ?")
                .verify()
                .assertSafe();
    }

    /** The verifier; over an outbox of keys it expects net changes (one per key and read, the row as read). */
    private ProcedureContractVerifier.Builder verifier(PostgresOutbox outbox) {
        ProcedureContractVerifier.Builder verifier = ProcedureContractVerifier.forFunction(database.dataSource(),
                outbox.changeFunction());
        return shape() == CaptureShape.KEYS ? verifier.netChanges() : verifier;
    }
}
