package io.tidemark.spring.boot.autoconfigure;

import io.tidemark.sync.Change;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.spi.Destination;
import io.tidemark.testing.EmbeddedPostgresServer;
import io.tidemark.testing.TestDatabase;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceProperties;
import org.springframework.boot.jdbc.autoconfigure.JdbcConnectionDetails;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.JdbcTemplate;

import javax.sql.DataSource;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code tidemark.provider=postgres-logical} on the embedded server (which runs with {@code wal_level = logical}):
 * a change delivered through the WAL, the slot moved by the engine's own store, the provider closed with the
 * context, and the properties' checks. Every slot made in this class's database is dropped after each test: a slot
 * keeps WAL on the shared server for as long as it exists.
 */
class PostgresLogicalAutoConfigurationTest {

    private static final AtomicInteger SLOTS = new AtomicInteger();
    private static final Duration WAIT = Duration.ofSeconds(20);

    private static TestDatabase database;
    private static JdbcTemplate sql;

    /** One per test: the test instance is new for each. */
    private final String slot = "tm_boot_" + ProcessHandle.current().pid() + "_" + SLOTS.incrementAndGet();

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(TidemarkAutoConfiguration.class))
            .withBean(DataSource.class, () -> database.dataSource())
            .withPropertyValues("tidemark.provider=postgres-logical", "tidemark.logical.slot=" + slot,
                    "tidemark.auto-startup=false", "tidemark.objects.items.table=public.items");

    @BeforeAll
    static void createDatabase() {
        database = EmbeddedPostgresServer.shared().createDatabase();
        sql = new JdbcTemplate(database.dataSource());
        database.execute("CREATE TABLE public.items (item_code text PRIMARY KEY, description text);"
                + " CREATE TABLE public.orders (order_id bigint PRIMARY KEY, item_code text)");
    }

    @AfterAll
    static void dropDatabase() {
        database.close();
    }

    /** Also the slots a failed test left streaming: their connection is ended first, as an active slot cannot go. */
    @AfterEach
    void dropSlots() {
        sql.queryForList("SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots"
                + " WHERE database = current_database() AND active_pid IS NOT NULL");
        Awaitility.await().atMost(WAIT).until(() -> sql.queryForObject("SELECT count(*) FROM pg_replication_slots"
                + " WHERE database = current_database() AND active", Long.class) == 0);
        sql.queryForList("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots"
                + " WHERE database = current_database()");
        database.execute("DROP PUBLICATION IF EXISTS " + slot);
    }

    /** The module README's example, with this server's role and a slot of the test's own. */
    @Test
    void the_readmes_example_delivers_an_insert_through_the_wal_and_the_slot_follows_the_engines_store() {
        List<Change> received = new CopyOnWriteArrayList<>();
        runner.withInitializer(new ReadmeYaml(Path.of("README.md"), "## Log-based capture"))
                .withBean(DataSourceProperties.class, () -> springDataSource(database.jdbcUrl()))
                .withBean("audit", Destination.class, () -> batch -> received.addAll(batch.changes()))
                .withPropertyValues("tidemark.logical.username=postgres", "tidemark.logical.password=",
                        "tidemark.store.schema=lg_store", "tidemark.logical.acknowledge-every=100ms",
                        "tidemark.logical.status-interval=200ms", "tidemark.objects.items.poll-interval=200ms")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    SyncEngine engine = context.getBean(SyncEngine.class);
                    assertThat(engine.trackedObjects()).extracting(object -> object.name() + ":" + object.procedure())
                            .containsExactlyInAnyOrder("items:\"public\".\"items\"", "orders:\"public\".\"orders\"");
                    assertThat(engine.runOnce("orders").outcome()).as("the stream's position recorded")
                            .isEqualTo(Outcome.SEEDED);
                    assertThat(engine.runOnce("items").outcome()).as("initial-sync full: the table exported")
                            .isIn(Outcome.DELIVERED, Outcome.NO_CHANGES);
                    engine.start();

                    database.execute("INSERT INTO public.items VALUES ('L-100', 'Sprocket')");

                    Change insert = Awaitility.await().atMost(WAIT).until(() -> received.stream()
                            .filter(change -> change.field("item_code").map(code -> code.asText().equals("L-100"))
                                    .orElse(false)).findFirst(), java.util.Optional::isPresent).orElseThrow();
                    assertThat(insert.operation().orElseThrow().code()).as("a change of the WAL, not the export")
                            .isEqualTo("I");
                    long version = insert.version().orElseThrow();
                    // The slot moves only past what the provider's store holds: it is the engine's, or it stays.
                    Awaitility.await().atMost(WAIT).until(() -> confirmedPosition() >= version);

                    context.close();
                    assertThat(Thread.getAllStackTraces().keySet()).filteredOn(Thread::isAlive)
                            .extracting(Thread::getName).as("the provider closed with the context")
                            .doesNotContain("tidemark-slot-" + slot);
                    // The server notices the ended connection a moment later; a provider left open never lets go.
                    Awaitility.await().atMost(WAIT).until(() -> !sql.queryForObject(
                            "SELECT active FROM pg_replication_slots WHERE slot_name = ?", Boolean.class, slot));
                });
    }

    @Test
    void without_install_a_database_lacking_the_publication_fails_the_start_up_check_naming_it() {
        runner.withBean("audit", Destination.class, () -> batch -> { })
                .withPropertyValues("tidemark.logical.url=" + database.jdbcUrl(), "tidemark.check-on-start=true")
                .run(context -> {
                    assertThat(context).hasFailed();
                    TidemarkException failure = outermostTidemarkFailure(context.getStartupFailure());
                    assertThat(failure.code()).isEqualTo(ErrorCode.CHECK_FAILED);
                    assertThat(failure.getMessage())
                            .contains("the publication " + slot + " does not exist")
                            .contains("the replication slot " + slot + " does not exist")
                            .contains("tidemark.logical.install is false");
                });
        assertThat(sql.queryForObject("SELECT count(*) FROM pg_replication_slots WHERE slot_name = ?", Long.class,
                slot)).as("install is off by default: nothing created").isZero();
    }

    @Test
    void objects_need_a_table_and_no_procedure_and_the_replication_connection_a_url() {
        runner.withBean("audit", Destination.class, () -> batch -> { })
                .withPropertyValues("tidemark.objects.untabled.initial-sync=full",
                        "tidemark.objects.functional.table=public.items",
                        "tidemark.objects.functional.procedure=public.items_changes",
                        "tidemark.logical.slot=Tidemark-Slot", "tidemark.logical.max-buffered-changes=10",
                        "tidemark.logical.max-transaction-changes=999", "tidemark.logical.max-transaction-bytes=64KB",
                        "tidemark.logical.max-buffered-bytes=1KB")
                .run(context -> {
                    Throwable failure = rootCause(context.getStartupFailure());
                    assertThat(((TidemarkException) failure).code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION);
                    assertThat(failure.getMessage())
                            .contains("tidemark.objects.untabled.table: required with"
                                    + " tidemark.provider=postgres-logical")
                            .contains("tidemark.objects.functional.procedure: must be absent with"
                                    + " tidemark.provider=postgres-logical")
                            .contains("tidemark.logical.url: required with tidemark.provider=postgres-logical")
                            .contains("tidemark.logical.slot: must be 1 to 63 lower-case letters")
                            .contains("tidemark.logical.max-buffered-changes: must be at least 1000 (was 10)")
                            .contains("tidemark.logical.max-transaction-changes: must be at least 1000 (was 999)")
                            .contains("tidemark.logical.max-transaction-bytes: must be at least 1MB (was 65536 bytes)")
                            .contains("tidemark.logical.max-buffered-bytes: must be at least 1MB (was 1024 bytes)")
                            .doesNotContain("tidemark.objects.items.");
                });
    }

    @Test
    void coordination_and_a_table_name_that_does_not_parse_are_refused_naming_their_properties() {
        runner.withBean("audit", Destination.class, () -> batch -> { })
                .withPropertyValues("tidemark.logical.url=" + database.jdbcUrl(), "tidemark.coordination.enabled=true",
                        "tidemark.objects.odd.table=a.b.c")
                .run(context -> {
                    Throwable failure = rootCause(context.getStartupFailure());
                    assertThat(failure.getMessage())
                            .contains("tidemark.coordination.enabled: must be false with"
                                    + " tidemark.provider=postgres-logical")
                            .contains("tidemark.objects.odd.table: is not a table name");
                });
    }

    @Test
    void two_objects_may_read_one_table_spelt_two_ways() {
        runner.withBean("audit", Destination.class, () -> batch -> { })
                .withPropertyValues("tidemark.logical.url=" + database.jdbcUrl(), "tidemark.logical.username=postgres",
                        "tidemark.logical.password=", "tidemark.objects.mirror.table=items")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(SyncEngine.class).trackedObjects()).extracting(o -> o.name())
                            .containsExactlyInAnyOrder("items", "mirror");
                });
    }

    @Test
    void the_replication_url_defaults_to_the_applications_spring_datasource_url() {
        runner.withBean(DataSourceProperties.class, () -> springDataSource("jdbc:sqlserver://localhost;database=x"))
                .withBean("audit", Destination.class, () -> batch -> { })
                .run(context -> assertThat(rootCause(context.getStartupFailure())).hasMessageContaining(
                        "tidemark.logical.url: must be a jdbc:postgresql: URL (it defaults to spring.datasource.url"));
    }

    @Test
    void a_service_connection_supplies_what_spring_datasource_leaves_unset() {
        runner.withBean(DataSourceProperties.class, DataSourceProperties::new)
                .withBean(JdbcConnectionDetails.class, () -> serviceConnection("jdbc:sqlserver://service-connection;database=x"))
                .withBean("audit", Destination.class, () -> batch -> { })
                .run(context -> assertThat(rootCause(context.getStartupFailure())).as("the URL came from the"
                        + " service connection: the only place it is set").hasMessageContaining(
                        "tidemark.logical.url: must be a jdbc:postgresql: URL"));
        runner.withBean(DataSourceProperties.class, () -> springDataSource(database.jdbcUrl()))
                .withBean(JdbcConnectionDetails.class, () -> serviceConnection("jdbc:sqlserver://service-connection;database=x"))
                .withBean("audit", Destination.class, () -> batch -> { })
                .run(context -> assertThat(context).as("spring.datasource.url, set, wins").hasNotFailed());
    }

    /** What Testcontainers or Docker Compose give an application in place of spring.datasource.*. */
    private static JdbcConnectionDetails serviceConnection(String url) {
        return new JdbcConnectionDetails() {
            @Override
            public String getUsername() {
                return "postgres";
            }

            @Override
            public String getPassword() {
                return "";
            }

            @Override
            public String getJdbcUrl() {
                return url;
            }
        };
    }

    private static DataSourceProperties springDataSource(String url) {
        DataSourceProperties properties = new DataSourceProperties();
        properties.setUrl(url);
        properties.setUsername("postgres");
        return properties;
    }

    /** The slot's confirmed position, in the versions' unit (a WAL position as a 64-bit integer). */
    private long confirmedPosition() {
        Long position = sql.queryForObject("SELECT (confirmed_flush_lsn - '0/0'::pg_lsn)::bigint"
                + " FROM pg_replication_slots WHERE slot_name = ?", Long.class, slot);
        return position == null ? 0 : position;
    }

    /** The auto-configuration's own failure, which may wrap the engine's. */
    private static TidemarkException outermostTidemarkFailure(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof TidemarkException tidemark) {
                return tidemark;
            }
        }
        throw new AssertionError("no TidemarkException in " + failure, failure);
    }

    private static Throwable rootCause(Throwable failure) {
        Throwable cause = failure;
        while (cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause;
    }
}
