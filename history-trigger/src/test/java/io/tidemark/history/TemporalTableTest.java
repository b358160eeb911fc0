package io.tidemark.history;

import io.tidemark.history.internal.ddl.HistoryNames;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.testing.EmbeddedPostgresTest;
import org.assertj.core.api.ThrowableAssert;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import javax.sql.DataSource;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Configuration is validated at build(), and what only the catalog can tell at install, each with a clear error. */
@EmbeddedPostgresTest
@ExtendWith(InvariantsAfterEach.class)
class TemporalTableTest {

    private static void refused(ThrowableAssert.ThrowingCallable call, ErrorCode code, String message) {
        assertThatThrownBy(call).isInstanceOfSatisfying(TidemarkException.class,
                e -> assertThat(e.code()).isEqualTo(code)).hasMessageContaining(message);
    }

    @Test
    void defaults_and_names() {
        TemporalTable t = TemporalTable.forTable("Policies").build();
        assertThat(t.table().toString()).as("unquoted names fold, no schema means public").isEqualTo("public.policies");
        assertThat(t.historyTable().toString()).isEqualTo("public.policies_history");
        assertThat(HistoryNames.of(t).writeFunction().toString()).isEqualTo("public.policies_history_write");
        assertThat(HistoryNames.of(t).asOfFunction().toString()).isEqualTo("public.policies_as_of");
        assertThat(t.settingsPrefix()).isEqualTo("tidemark");
        assertThat(t.truncatePolicy()).isEqualTo(TruncatePolicy.CLOSE_VERSIONS);
        assertThat(t.retention()).isEmpty();
        TemporalTable custom = TemporalTable.forTable("sales.\"Order\"").historyTable("audit.order_versions").build();
        assertThat(custom.historyTable().toString()).isEqualTo("audit.order_versions");
        assertThat(HistoryNames.of(custom).writeFunction().toString()).isEqualTo("audit.order_versions_write");
        assertThat(HistoryNames.of(custom).asOfFunction().quoted()).isEqualTo("\"sales\".\"Order_as_of\"");
    }

    /** Setters only store: build() reports every bad value at once, nulls included. */
    @Test
    void every_problem_is_reported_by_build() {
        TemporalTable.Builder builder = TemporalTable.forTable("t").historyTable("a.b.c").exclude("x", null, "x")
                .seedValidFrom(null).settingsPrefix("my.app").retention(Duration.ZERO).pruneBatchSize(0)
                .truncatePolicy(null).triggerMode(null).clock(null);
        refused(builder::build, ErrorCode.INVALID_CONFIGURATION, "[t] has 10 configuration problems:");
        assertThatThrownBy(builder::build)
                .hasMessageContaining("more than two parts")
                .hasMessageContaining("exclude(...) names a null column")
                .hasMessageContaining("seedValidFrom must not be null")
                .hasMessageContaining("settings prefix 'my.app'")
                .hasMessageContaining("must be positive")
                .hasMessageContaining("pruneBatchSize must be at least 1, was 0")
                .hasMessageContaining("truncatePolicy must not be null")
                .hasMessageContaining("triggerMode must not be null")
                .hasMessageContaining("clock must not be null")
                .hasMessageContaining("a column is excluded twice");
    }

    @Test
    void invalid_options_are_refused_at_build() {
        refused(() -> TemporalTable.forTable("t; DROP TABLE x").build(), ErrorCode.INVALID_CONFIGURATION, "Refusing");
        refused(() -> TemporalTable.forTable("t").settingsPrefix("my.app").build(), ErrorCode.INVALID_CONFIGURATION,
                "settings prefix 'my.app'");
        refused(() -> TemporalTable.forTable("t").retention(Duration.ZERO).build(), ErrorCode.INVALID_CONFIGURATION,
                "must be positive");
        refused(() -> TemporalTable.forTable("t").exclude("a", "a").build(), ErrorCode.INVALID_CONFIGURATION,
                "excluded twice");
        refused(() -> TemporalTable.forTable("t").pruneBatchSize(0).build(), ErrorCode.INVALID_CONFIGURATION,
                "pruneBatchSize");
        refused(() -> TemporalTable.forTable("t").historyTable("a.b.c").build(), ErrorCode.INVALID_CONFIGURATION,
                "more than two parts");
    }

    @Test
    void what_only_the_catalog_knows_is_refused_at_install(DataSource ds) {
        Db.exec(ds, "CREATE TABLE no_key (a int); CREATE VIEW a_view AS SELECT 1 AS id;"
                + " CREATE TABLE parted (id int PRIMARY KEY) PARTITION BY RANGE (id);"
                + " CREATE TABLE keyed (id int PRIMARY KEY, body text, seen date, n int)");
        refused(() -> TemporalTable.forTable("missing").build().install(ds), ErrorCode.SCHEMA_UNSUPPORTED,
                "does not exist");
        refused(() -> TemporalTable.forTable("no_key").build().install(ds), ErrorCode.SCHEMA_UNSUPPORTED,
                "has no primary key");
        refused(() -> TemporalTable.forTable("a_view").build().install(ds), ErrorCode.SCHEMA_UNSUPPORTED,
                "is not an ordinary table");
        refused(() -> TemporalTable.forTable("parted").build().install(ds), ErrorCode.SCHEMA_UNSUPPORTED,
                "install history on each partition instead");
        refused(() -> TemporalTable.forTable("keyed").exclude("id").build().install(ds),
                ErrorCode.INVALID_CONFIGURATION, "part of the primary key and cannot be excluded");
        refused(() -> TemporalTable.forTable("keyed").exclude("nope").build().install(ds),
                ErrorCode.INVALID_CONFIGURATION, "excluded column \"nope\" does not exist");
        refused(() -> TemporalTable.forTable("keyed").seedValidFrom("n").build().install(ds),
                ErrorCode.INVALID_CONFIGURATION, "it must be timestamptz, timestamp or date");
        refused(() -> TemporalTable.forTable("keyed").seedValidFrom("nope").build().script(ds),
                ErrorCode.INVALID_CONFIGURATION, "seed column \"nope\" does not exist");
        assertThat(Db.count(ds, "SELECT count(*) FROM pg_class WHERE relname LIKE '%history%'")).isZero();
    }

    @Test
    void a_history_name_taken_by_another_table_or_function_is_refused(DataSource ds) {
        Db.exec(ds, "CREATE TABLE one (id int PRIMARY KEY); CREATE TABLE two (id int PRIMARY KEY);"
                + " CREATE TABLE three (id int PRIMARY KEY);"
                + " CREATE FUNCTION three_history_write() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$");
        TemporalTable.forTable("one").historyTable("shared_history").build().install(ds);
        refused(() -> TemporalTable.forTable("two").historyTable("shared_history").build().install(ds),
                ErrorCode.INVALID_CONFIGURATION, "already records public.one");
        refused(() -> TemporalTable.forTable("three").build().install(ds), ErrorCode.SCHEMA_UNSUPPORTED,
                "function public.three_history_write already exists and was not generated for this table");
        refused(() -> TemporalTable.forTable("one").build().verify(ds), ErrorCode.INVALID_CONFIGURATION,
                "installed with history table public.shared_history");
    }

    @Test
    void a_writer_that_commits_while_a_repeatable_read_install_waits_gets_its_open_version(DataSource ds)
            throws Exception {
        Db.exec(ds, "CREATE TABLE rr_install (id int PRIMARY KEY, v text); INSERT INTO rr_install VALUES (1, 'a')");
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(1);
        try (java.sql.Connection w = ds.getConnection(); java.sql.Statement s = w.createStatement()) {
            w.setAutoCommit(false);
            s.execute("INSERT INTO rr_install VALUES (2, 'b')");
            java.util.concurrent.Future<InstallReport> install = pool.submit(() -> TemporalTable.forTable("rr_install")
                    .build().install(new IsolationDataSource(ds, java.sql.Connection.TRANSACTION_REPEATABLE_READ)));
            Waits.untilWaitingOn(ds, "rr_install", 1);
            w.commit();
            assertThat(install.get(30, java.util.concurrent.TimeUnit.SECONDS).seededRows())
                    .as("the seed reads after the lock, in READ COMMITTED whatever the pool's default").isEqualTo(2);
        } finally {
            pool.shutdownNow();
        }
        assertThat(Db.count(ds, "SELECT count(*) FROM rr_install_history WHERE valid_to = 'infinity'")).isEqualTo(2);
    }
}
