package io.tidemark.postgres.coordination;

import io.tidemark.postgres.PostgresProvider;
import io.tidemark.sync.CheckReport;
import io.tidemark.sync.Coordination;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TrackedObject;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The lease tables belong to coordination: a store without it creates none, an engine with it creates them, and the
 * engine's start-up check reads them, naming the table it cannot read.
 */
@EmbeddedPostgresTest
class LeaseTablesTest {

    private final TestDatabase database;
    private final DataSource ds;

    LeaseTablesTest(TestDatabase database) throws Exception {
        this.database = database;
        this.ds = database.dataSource();
        StreamFixture.installOnce(ds, 1);
    }

    private SyncEngine.Builder engine(JdbcWatermarkStore store) {
        return SyncEngine.builder()
                .name("a")
                .provider(PostgresProvider.create(ds))
                .watermarks(store)
                .track(TrackedObject.of("stream_01", "public.stream_01"))
                .destination("d1", batch -> { });
    }

    @Test
    void a_store_without_coordination_creates_no_lease_tables_and_a_coordinated_engine_creates_them()
            throws Exception {
        JdbcWatermarkStore store = JdbcWatermarkStore.builder(ds).schema("plain").build();
        try (SyncEngine engine = engine(store).build()) {
            assertThat(engine.check().problems()).isEmpty();
        }
        assertThat(exists("plain.sync_state")).isTrue();
        assertThat(exists("plain.sync_state_leases")).as("no coordination, no lease table").isFalse();
        assertThat(exists("plain.sync_state_instances")).isFalse();

        try (SyncEngine engine = engine(store)
                .coordination(Coordination.builder().instanceId("a").leaseDuration(Duration.ofSeconds(3)).build())
                .build()) {
            assertThat(exists("plain.sync_state_leases")).isTrue();
            assertThat(exists("plain.sync_state_instances")).isTrue();
            assertThat(engine.check().problems()).isEmpty();
        }
    }

    @Test
    void the_check_of_a_coordinated_engine_names_a_lease_table_it_cannot_read() throws Exception {
        JdbcWatermarkStore store = JdbcWatermarkStore.builder(ds).schema("probed").build();
        try (SyncEngine engine = engine(store)
                .coordination(Coordination.builder().instanceId("a").leaseDuration(Duration.ofSeconds(3)).build())
                .build()) {
            database.execute("DROP TABLE probed.sync_state_leases");

            CheckReport report = engine.check();

            assertThat(report.problems()).singleElement().satisfies(p -> {
                assertThat(p.code()).isEqualTo(ErrorCode.STORE_FAILED);
                assertThat(p.subject()).contains("\"probed\".\"sync_state_leases\"");
                assertThat(p.message()).contains("sync_state_leases").contains("script()");
            });
        }
    }

    /**
     * Lease tables a DBA created, used by a role that does not own them: building a coordinated engine that creates
     * missing tables must not run ALTER TABLE on them when their columns are there (it needs ownership, and takes
     * an ACCESS EXCLUSIVE lock that would stall every other instance's renewals at each start).
     */
    @Test
    void a_coordinated_engine_alters_no_lease_table_whose_columns_exist() throws Exception {
        JdbcWatermarkStore owner = JdbcWatermarkStore.builder(ds).schema("dba").build();
        try (SyncEngine engine = engine(owner)
                .coordination(Coordination.builder().instanceId("a").leaseDuration(Duration.ofSeconds(3)).build())
                .build()) {
            assertThat(exists("dba.sync_state_leases")).isTrue();
        }
        DataSource app = database.createRole("i12_app");
        database.execute("""
                GRANT USAGE, CREATE ON SCHEMA dba TO i12_app;
                GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA dba TO i12_app;
                GRANT USAGE ON ALL SEQUENCES IN SCHEMA dba TO i12_app;
                GRANT EXECUTE ON FUNCTION public.stream_01(json) TO i12_app;
                GRANT SELECT ON public.stream_rows TO i12_app""");

        JdbcWatermarkStore store = JdbcWatermarkStore.builder(app).schema("dba").build();
        try (SyncEngine engine = SyncEngine.builder()
                .name("b")
                .provider(PostgresProvider.create(app))
                .watermarks(store)
                .track(TrackedObject.of("stream_01", "public.stream_01"))
                .destination("d1", batch -> { })
                .coordination(Coordination.builder().instanceId("b").leaseDuration(Duration.ofSeconds(3)).build())
                .build()) {
            assertThat(engine.check().problems()).isEmpty();
        }
    }

    private boolean exists(String table) throws SQLException {
        try (Connection c = ds.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT to_regclass(?) IS NOT NULL")) {
            ps.setString(1, table);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }
}
