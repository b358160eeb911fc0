package io.tidemark.cli;

import io.tidemark.postgres.PostgresOutbox;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** verify-contract prints the verifier's report; exit 0 only when every scenario is SAFE. */
@EmbeddedPostgresTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class VerifyContractIT {

    private final TestDatabase database;

    VerifyContractIT(TestDatabase database) {
        this.database = database;
    }

    @BeforeAll
    void items() {
        database.execute("CREATE TABLE public.items (item_code text PRIMARY KEY, description text, price numeric NOT NULL)");
        PostgresOutbox.forTable("public.items").payloadKey("item_code", "ItemCode")
                .payloadKey("description", "Description").columns("description", "price").build()
                .install(database.dataSource());
        // Answers with a version and never a change: loses everything.
        database.execute("""
                CREATE FUNCTION public.forgetful_changes(payload json) RETURNS json LANGUAGE sql AS $$
                    SELECT json_build_object('Metadata', json_build_object('Sync', json_build_object('Version', 1)),
                                             'Data', '[]'::json)
                $$""");
    }

    private List<String> arguments(String function, String... more) {
        List<String> args = new ArrayList<>(List.of("verify-contract", function, "--url", database.jdbcUrl(),
                "--key-field", "ItemCode",
                "--insert", "INSERT INTO public.items (item_code, description, price) VALUES (?, 'created', 1)",
                "--update", "UPDATE public.items SET price = price + 1 WHERE item_code = ?",
                "--clear", "UPDATE public.items SET description = NULL WHERE item_code = ?",
                "--cleared-field", "Description",
                "--delete", "DELETE FROM public.items WHERE item_code = ?"));
        args.addAll(List.of(more));
        return args;
    }

    @Test
    void the_generated_outbox_function_is_safe() {
        Cli.Run run = Cli.run(arguments("public.items_changes").toArray(String[]::new));

        assertThat(run.exit()).as(run.toString()).isZero();
        assertThat(run.stdout()).startsWith("Procedure contract of public.items_changes: SAFE on every scenario\n")
                .contains("SAFE    in-flight-interleaving");
    }

    @Test
    void a_function_that_loses_changes_is_a_finding_with_the_reasons() {
        Cli.Run run = Cli.run(arguments("public.forgetful_changes", "--details").toArray(String[]::new));

        assertThat(run.exit()).as(run.toString()).isEqualTo(ExitCode.FINDING);
        assertThat(run.stdout()).startsWith("Procedure contract of public.forgetful_changes: NOT SAFE")
                .contains("UNSAFE  basic-order").contains("transcript:");
        assertThat(run.stderr()).contains("public.forgetful_changes is NOT SAFE");
    }

    @Test
    void a_missing_statement_is_a_usage_error() {
        List<String> args = arguments("public.items_changes");
        int delete = args.indexOf("--delete");
        args.subList(delete, delete + 2).clear();

        Cli.Run run = Cli.run(args.toArray(String[]::new));

        assertThat(run.exit()).as(run.toString()).isEqualTo(ExitCode.USAGE);
        assertThat(run.stderr()).contains("--delete");
    }
}
