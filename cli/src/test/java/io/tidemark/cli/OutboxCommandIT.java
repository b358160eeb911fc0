package io.tidemark.cli;

import io.tidemark.postgres.PostgresOutbox;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** outbox install, verify and uninstall against a live database, with their exit codes. */
@EmbeddedPostgresTest
class OutboxCommandIT {

    @Test
    void install_verify_uninstall(TestDatabase database) {
        database.execute("CREATE TABLE public.parts (id bigint PRIMARY KEY, name text, weight numeric)");
        String url = database.jdbcUrl();

        Cli.Run install = Cli.run("outbox", "install", "parts", "--payload-key", "id=PartId", "--url", url);
        assertThat(install.exit()).as(install.toString()).isZero();
        assertThat(install.stdout()).contains("outbox of public.parts installed: public.parts_outbox");
        assertThat(PostgresOutbox.forTable("parts").payloadKey("id", "PartId").build()
                .differences(database.dataSource())).as("installed as the API would").isEmpty();

        Cli.Run clean = Cli.run("outbox", "verify", "parts", "--payload-key", "id=PartId", "--url", url);
        assertThat(clean.exit()).as(clean.toString()).isZero();
        assertThat(clean.stdout()).contains("installed as configured");

        Cli.Run drift = Cli.run("outbox", "verify", "parts", "--url", url);
        assertThat(drift.exit()).as("other options than installed: a finding\n" + drift).isEqualTo(ExitCode.FINDING);
        assertThat(drift.stdout()).contains("PartId");
        assertThat(drift.stderr()).contains("outbox of public.parts: 1 difference");

        Cli.Run again = Cli.run("outbox", "install", "parts", "--url", url);
        assertThat(again.exit()).as("install refuses to change another configuration: SCHEMA_DRIFT is a finding\n"
                + again).isEqualTo(ExitCode.FINDING);
        assertThat(again.stderr()).contains("SCHEMA_DRIFT");

        Cli.Run uninstall = Cli.run("outbox", "uninstall", "parts", "--url", url);
        assertThat(uninstall.exit()).as(uninstall.toString()).isZero();
        assertThat(database.dataSource()).satisfies(ds -> assertThat(
                PostgresOutbox.forTable("parts").build().differences(ds)).isNotEmpty());
    }

    @Test
    void a_missing_table_is_refused_by_the_database_with_its_name(TestDatabase database) {
        Cli.Run run = Cli.run("outbox", "install", "no_such_table", "--url", database.jdbcUrl());

        assertThat(run.exit()).as(run.toString()).isEqualTo(ExitCode.FAILED);
        assertThat(run.stderr()).contains("SCHEMA_UNSUPPORTED").contains("no_such_table");
        assertThat(run.stdout()).isEmpty();
    }

    @Test
    void options_the_api_refuses_are_usage_errors() {
        Cli.Run noShape = Cli.run("outbox", "script", "items");
        assertThat(noShape.exit()).as(noShape.toString()).isEqualTo(ExitCode.USAGE);
        assertThat(noShape.stderr()).contains("INVALID_CONFIGURATION").contains("needs the key and the captured columns");

        Cli.Run badName = Cli.run("outbox", "script", "items; DROP TABLE x", "--key", "id", "--columns", "a");
        assertThat(badName.exit()).as(badName.toString()).isEqualTo(ExitCode.USAGE);

        Cli.Run badPolicy = Cli.run("outbox", "script", "items", "--key", "id", "--columns", "a", "--truncate", "nope");
        assertThat(badPolicy.exit()).as(badPolicy.toString()).isEqualTo(ExitCode.USAGE);
        assertThat(badPolicy.stderr()).contains("--truncate");
    }
}
