package io.tidemark.cli;

import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.spi.WatermarkState;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.OptionalLong;

import static org.assertj.core.api.Assertions.assertThat;

/** status, pause, resume and reset on the watermark store an engine would use, from outside the application. */
@EmbeddedPostgresTest
class StoreCommandsIT {

    private static final Instant AT = Instant.parse("2026-11-30T10:15:30Z");

    @Test
    void status_pause_resume_reset(TestDatabase database) {
        JdbcWatermarkStore store = JdbcWatermarkStore.create(database.dataSource());
        store.advance("items", "public.items_changes", OptionalLong.empty(), 42, AT);
        store.recordPoll("items", AT, "destination refused: 503");
        store.advance("orders", "public.orders_changes", OptionalLong.empty(), 7, AT);
        String url = database.jdbcUrl();

        Cli.Run status = Cli.run("status", "--url", url);
        assertThat(status.exit()).as(status.toString()).isZero();
        assertThat(status.stdout()).contains("items\n  version:     42\n  last moved:  2026-11-30T10:15:30Z")
                .contains("  last error:  destination refused: 503")
                .contains("orders\n  version:     7");

        Cli.Run pause = Cli.run("pause", "items", "--url", url);
        assertThat(pause.exit()).as(pause.toString()).isZero();
        assertThat(state(store, "items").paused()).isTrue();
        assertThat(Cli.run("status", "items", "--url", url).stdout()).startsWith("items  PAUSED\n")
                .doesNotContain("orders");

        Cli.Run destination = Cli.run("pause", "orders", "--destination", "webhook", "--url", url);
        assertThat(destination.exit()).as(destination.toString()).isZero();
        assertThat(state(store, "orders").positions().get("webhook").paused()).isTrue();
        assertThat(state(store, "orders").paused()).as("only the destination").isFalse();
        assertThat(Cli.run("resume", "orders", "--destination", "webhook", "--url", url).exit()).isZero();
        assertThat(state(store, "orders").positions().get("webhook").paused()).isFalse();

        Cli.Run reset = Cli.run("reset", "items", "--url", url);
        assertThat(reset.exit()).as(reset.toString()).isZero();
        assertThat(reset.stdout()).contains("items reset").contains("still paused");
        assertThat(state(store, "items").version()).isEmpty();
        assertThat(state(store, "orders").version()).hasValue(7);

        Cli.Run resume = Cli.run("resume", "items", "--url", url);
        assertThat(resume.exit()).as(resume.toString()).isZero();
        assertThat(state(store, "items").paused()).isFalse();
    }

    @Test
    void reset_of_an_object_that_is_not_paused_is_refused_unless_forced(TestDatabase database) {
        JdbcWatermarkStore store = JdbcWatermarkStore.create(database.dataSource());
        store.advance("running", "public.running_changes", OptionalLong.empty(), 5, AT);

        Cli.Run refused = Cli.run("reset", "running", "--url", database.jdbcUrl());
        assertThat(refused.exit()).as(refused.toString()).isEqualTo(ExitCode.FINDING);
        assertThat(refused.stderr()).contains("running is not paused: pause it first");
        assertThat(state(store, "running").version()).hasValue(5);

        Cli.Run forced = Cli.run("reset", "running", "--force", "--url", database.jdbcUrl());
        assertThat(forced.exit()).as(forced.toString()).isZero();
        assertThat(state(store, "running").version()).isEmpty();
    }

    @Test
    void an_unknown_object_is_a_usage_error_listing_the_stored_ones(TestDatabase database) {
        JdbcWatermarkStore.create(database.dataSource()).advance("known", "public.f", OptionalLong.empty(), 1, AT);

        for (String command : new String[] {"status", "pause", "resume", "reset"}) {
            Cli.Run run = Cli.run(command, "unknwon", "--url", database.jdbcUrl());
            assertThat(run.exit()).as(run.toString()).isEqualTo(ExitCode.USAGE);
            assertThat(run.stderr()).contains("no object 'unknwon' in tidemark.sync_state; the objects there are [")
                    .contains("known").contains("Run 'tidemark " + command + " --help' for its options.");
        }
    }

    @Test
    void a_missing_store_is_reported_and_never_created(TestDatabase database) {
        Cli.Run run = Cli.run("status", "--store-schema", "elsewhere", "--url", database.jdbcUrl());

        assertThat(run.exit()).as(run.toString()).isEqualTo(ExitCode.FAILED);
        assertThat(run.stderr()).contains("elsewhere");
        database.execute("DO $$ BEGIN IF to_regnamespace('elsewhere') IS NOT NULL THEN"
                + " RAISE EXCEPTION 'the status command created schema elsewhere'; END IF; END $$");
    }

    private static WatermarkState state(JdbcWatermarkStore store, String object) {
        return store.load(object).orElseThrow();
    }
}
