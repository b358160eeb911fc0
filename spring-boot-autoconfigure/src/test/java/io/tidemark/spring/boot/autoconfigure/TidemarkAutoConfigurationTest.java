package io.tidemark.spring.boot.autoconfigure;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tidemark.postgres.PostgresOutbox;
import io.tidemark.spring.boot.autoconfigure.spi.SyncEngineCustomizer;
import io.tidemark.sync.InMemoryWatermarkStore;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.micrometer.MicrometerSyncListener;
import io.tidemark.sync.spi.Destination;
import io.tidemark.testing.EmbeddedPostgresServer;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import javax.sql.DataSource;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Every condition of {@link TidemarkAutoConfiguration} and every kind of property error. */
@ExtendWith(OutputCaptureExtension.class)
class TidemarkAutoConfigurationTest {

    private static TestDatabase database;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(TidemarkAutoConfiguration.class))
            .withBean(DataSource.class, () -> database.dataSource())
            .withPropertyValues("tidemark.auto-startup=false", "tidemark.store.type=memory",
                    "tidemark.objects.items.procedure=public.items_changes",
                    "tidemark.objects.items.initial-sync=incremental");

    @BeforeAll
    static void createDatabase() {
        database = EmbeddedPostgresServer.shared().createDatabase();
        database.execute("CREATE TABLE public.items (item_code text PRIMARY KEY, description text)");
        PostgresOutbox.forTable("public.items").build().install(database.dataSource());
    }

    @AfterAll
    static void dropDatabase() {
        database.close();
    }

    @Test
    void builds_the_engine_from_properties_with_a_bean_destination_and_a_property_destination(@TempDir Path folder) {
        List<String> audited = new CopyOnWriteArrayList<>();
        runner.withBean("audit", Destination.class, () -> batch -> batch.changes().forEach(
                        change -> audited.add(change.field("item_code").orElseThrow().asText())))
                .withPropertyValues("tidemark.destinations.export.type=json-lines",
                        "tidemark.destinations.export.json-lines.folder=" + folder,
                        "tidemark.objects.items.max-rows=500", "tidemark.objects.items.poll-interval=2s")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(SyncEngine.class)
                            .hasSingleBean(TidemarkEngineLifecycle.class);
                    TrackedObject items = context.getBean(SyncEngine.class).trackedObjects().get(0);
                    assertThat(items.name()).isEqualTo("items");
                    assertThat(items.procedure()).isEqualTo("public.items_changes");
                    assertThat(items.maxRows()).hasValue(500);
                    assertThat(items.pollInterval()).hasValue(java.time.Duration.ofSeconds(2));
                    assertThat(context.getBean(TidemarkEngineLifecycle.class).isRunning())
                            .as("tidemark.auto-startup=false").isFalse();
                    SyncEngine engine = context.getBean(SyncEngine.class);
                    engine.runOnce();
                    database.execute("INSERT INTO public.items VALUES ('D-400', 'Doohickey')");
                    engine.runOnce();
                    assertThat(audited).contains("D-400");
                    try (var files = java.nio.file.Files.list(folder)) {
                        assertThat(files.map(file -> file.getFileName().toString()))
                                .anySatisfy(name -> assertThat(name).startsWith("tidemark"));
                    }
                });
    }

    @Test
    void a_webhook_and_a_jdbc_table_are_made_from_properties_alone() {
        database.execute("CREATE TABLE IF NOT EXISTS public.items_copy (item_code text PRIMARY KEY, description text)");
        List<String> received = new CopyOnWriteArrayList<>();
        com.sun.net.httpserver.HttpServer server = startReceiver(received);
        try {
            runner.withPropertyValues("tidemark.destinations.hook.type=webhook",
                            "tidemark.destinations.hook.webhook.url=http://localhost:" + server.getAddress().getPort()
                                    + "/hook",
                            "tidemark.destinations.hook.webhook.headers.X-Tenant=shop",
                            "tidemark.destinations.copy.type=jdbc-table",
                            "tidemark.destinations.copy.jdbc-table.table=public.items_copy",
                            "tidemark.destinations.copy.jdbc-table.columns=item_code,description",
                            "tidemark.destinations.copy.jdbc-table.key-columns=item_code")
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        SyncEngine engine = context.getBean(SyncEngine.class);
                        engine.runOnce();
                        database.execute("INSERT INTO public.items VALUES ('E-500', 'Thingamajig')");
                        engine.runOnce();
                        assertThat(received).anySatisfy(body -> assertThat(body).contains("E-500"));
                        assertThat(new org.springframework.jdbc.core.JdbcTemplate(database.dataSource())
                                .queryForObject("SELECT description FROM public.items_copy WHERE item_code = 'E-500'",
                                        String.class)).isEqualTo("Thingamajig");
                    });
        } finally {
            server.stop(0);
        }
    }

    /** A local HTTP receiver that accepts every POST and keeps its body. */
    private static com.sun.net.httpserver.HttpServer startReceiver(List<String> received) {
        try {
            com.sun.net.httpserver.HttpServer server = com.sun.net.httpserver.HttpServer.create(
                    new java.net.InetSocketAddress("127.0.0.1", 0), 0);
            server.createContext("/hook", exchange -> {
                received.add(new String(exchange.getRequestBody().readAllBytes(),
                        java.nio.charset.StandardCharsets.UTF_8));
                exchange.sendResponseHeaders(204, -1);
                exchange.close();
            });
            server.start();
            return server;
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void the_engine_delivers_to_a_bean_destination_with_the_jdbc_stores_installed_in_the_same_database() {
        List<String> delivered = new CopyOnWriteArrayList<>();
        runner.withBean("audit", Destination.class, () -> batch -> batch.changes().forEach(
                        change -> delivered.add(change.field("item_code").orElseThrow().asText())))
                .withPropertyValues("tidemark.store.type=jdbc", "tidemark.store.schema=starter_store")
                .run(context -> {
                    SyncEngine engine = context.getBean(SyncEngine.class);
                    engine.runOnce();
                    database.execute("INSERT INTO public.items VALUES ('C-300', 'Gizmo')");
                    engine.runOnce();
                    assertThat(delivered).containsExactly("C-300");
                    database.execute("SELECT 1 FROM starter_store.sync_state, starter_store.dead_letters LIMIT 1");
                });
    }

    @Test
    void coordination_from_properties_leases_the_objects_to_this_instance() {
        runner.withBean("audit", Destination.class, () -> batch -> { })
                .withPropertyValues("tidemark.auto-startup=true", "tidemark.store.type=jdbc",
                        "tidemark.store.schema=starter_leases", "tidemark.coordination.enabled=true",
                        "tidemark.coordination.lease-duration=3s", "tidemark.coordination.instance-id=app-1")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    SyncEngine engine = context.getBean(SyncEngine.class);
                    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20))
                            .until(() -> engine.status("items").leaseHolder().isPresent());
                    assertThat(engine.status("items").leaseHolder()).as("the lease of the only instance")
                            .hasValue("app-1");
                });
    }

    @Test
    void coordination_needs_the_jdbc_store_and_a_lease_of_at_least_a_second() {
        runner.withBean("audit", Destination.class, () -> batch -> { })
                .withPropertyValues("tidemark.coordination.enabled=true",
                        "tidemark.coordination.lease-duration=500ms", "tidemark.coordination.instance-id= ")
                .run(context -> assertThat(rootCause(context.getStartupFailure()).getMessage())
                        .contains("tidemark.coordination.enabled: true needs tidemark.store.type=jdbc")
                        .contains("tidemark.coordination.lease-duration: must be at least 1s (was PT0.5S)")
                        .contains("tidemark.coordination.instance-id: must not be blank"));
    }

    @Test
    void the_engine_waits_for_the_database_initialization_that_installs_its_procedures() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(TidemarkAutoConfiguration.class,
                        org.springframework.boot.jdbc.autoconfigure.DataSourceInitializationAutoConfiguration.class))
                .withBean(DataSource.class, () -> database.dataSource())
                .withBean("audit", Destination.class, () -> batch -> { })
                .withPropertyValues("tidemark.auto-startup=false", "tidemark.store.type=memory",
                        "tidemark.check-on-start=true", "tidemark.objects.init.procedure=public.init_items_changes",
                        "spring.sql.init.mode=always", "spring.sql.init.schema-locations=classpath:engine-init/schema.sql")
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(SyncEngine.class));
    }

    @Test
    void backs_off_entirely_when_the_application_defines_its_own_engine() {
        SyncEngine own = SyncEngine.builder().provider(io.tidemark.postgres.PostgresProvider.create(database.dataSource()))
                .watermarks(InMemoryWatermarkStore.create()).track(TrackedObject.of("own", "public.own_changes"))
                .destination("d", batch -> { }).build();
        runner.withBean(SyncEngine.class, () -> own)
                .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(SyncEngine.class)
                            .doesNotHaveBean(TidemarkEngineLifecycle.class)
                            .doesNotHaveBean(MicrometerSyncListener.class)
                            .doesNotHaveBean(TidemarkProperties.class);
                    assertThat(context.getBean(SyncEngine.class)).isSameAs(own);
                });
        own.close();
    }

    @Test
    void backs_off_when_disabled_or_without_a_single_data_source() {
        runner.withPropertyValues("tidemark.enabled=false")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(SyncEngine.class));
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(TidemarkAutoConfiguration.class))
                .withPropertyValues("tidemark.objects.items.procedure=public.items_changes")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(SyncEngine.class));
        runner.withBean("second", DataSource.class, () -> database.dataSource())
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(SyncEngine.class));
    }

    @Test
    void every_wrong_value_fails_start_up_at_once_each_naming_its_property() {
        runner.withPropertyValues("tidemark.page-size=0", "tidemark.threads=0", "tidemark.poll-interval=0s",
                        "tidemark.objects.orders.initial-sync=full",
                        "tidemark.destinations.hook.type=webhook",
                        "tidemark.destinations.copy.type=jdbc-table", "tidemark.destinations.copy.jdbc-table.table=t",
                        "tidemark.destinations.audit.policy.max-attempts=0")
                .run(context -> {
                    assertThat(context).hasFailed();
                    Throwable failure = rootCause(context.getStartupFailure());
                    assertThat(failure).isInstanceOf(TidemarkException.class);
                    assertThat(((TidemarkException) failure).code())
                            .isEqualTo(io.tidemark.sync.ErrorCode.INVALID_CONFIGURATION);
                    assertThat(failure.getMessage())
                            .contains("tidemark.page-size: must be at least 1 (was 0)")
                            .contains("tidemark.threads: must be at least 1 (was 0)")
                            .contains("tidemark.poll-interval: must be a positive duration")
                            .contains("tidemark.objects.orders.procedure: required")
                            .contains("tidemark.destinations.hook.webhook.url: required for type webhook")
                            .contains("tidemark.destinations.copy.jdbc-table.columns: required")
                            .contains("tidemark.destinations.copy.jdbc-table.key-columns: required")
                            .contains("tidemark.destinations.audit.policy.max-attempts: must be at least 1")
                            .contains("tidemark.destinations.audit.type: bean (the default), but there is no"
                                    + " Destination bean named 'audit'")
                            .contains("allowed types: bean, webhook, json-lines, jdbc-table");
                });
    }

    @Test
    void an_application_without_any_destination_is_told_how_to_add_one() {
        runner.run(context -> assertThat(rootCause(context.getStartupFailure())).hasMessageContaining(
                "tidemark.destinations: no destination: declare a Destination bean, or"
                        + " tidemark.destinations.<name>.type (one of bean, webhook, json-lines, jdbc-table)"));
    }

    @Test
    void a_value_outside_an_enumeration_names_the_property_and_prints_the_allowed_values(CapturedOutput output) {
        runner.withBean("audit", Destination.class, () -> batch -> { })
                .withPropertyValues("tidemark.objects.items.initial-sync=sometimes")
                .run(context -> assertThat(context.getStartupFailure()).rootCause().isNotNull()
                        .satisfies(ignored -> assertThat(context.getStartupFailure()).hasStackTraceContaining(
                                "tidemark.objects.items.initial-sync")));

        // What a user sees: Spring Boot's failure analysis lists the values the property accepts.
        assertThatThrownBy(() -> new SpringApplicationBuilder(MinimalApplication.class)
                .web(WebApplicationType.NONE)
                .properties("tidemark.objects.items.procedure=public.items_changes",
                        "tidemark.objects.items.initial-sync=sometimes", "tidemark.auto-startup=false")
                .run()).hasRootCauseInstanceOf(IllegalArgumentException.class)
                .isInstanceOfAny(BindException.class, RuntimeException.class);
        assertThat(output).contains("tidemark.objects.items.initial-sync").contains("sometimes")
                .contains("The following values are valid").contains("FULL").contains("INCREMENTAL");
    }

    @Test
    void sqlserver_without_tidemark_sqlserver_on_the_class_path_names_the_missing_module() {
        runner.withClassLoader(new FilteredClassLoader("io.tidemark.sqlserver"))
                .withBean("audit", Destination.class, () -> batch -> { })
                .withPropertyValues("tidemark.provider=sqlserver")
                .run(context -> assertThat(rootCause(context.getStartupFailure())).hasMessageContaining(
                        "tidemark.provider: sqlserver needs tidemark-sqlserver on the class path;"
                                + " allowed values: postgres, postgres-logical, sqlserver"));
    }

    @Test
    void property_destinations_without_tidemark_destinations_name_the_missing_module(@TempDir Path folder) {
        runner.withClassLoader(new FilteredClassLoader("io.tidemark.destinations"))
                .withPropertyValues("tidemark.destinations.export.type=json-lines",
                        "tidemark.destinations.export.json-lines.folder=" + folder)
                .run(context -> assertThat(rootCause(context.getStartupFailure())).hasMessageContaining(
                        "tidemark.destinations.export.type: json-lines needs tidemark-destinations on the class path"));
    }

    @Test
    void the_engine_meters_go_to_the_application_registry() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        runner.withBean("audit", Destination.class, () -> batch -> { })
                .withBean(MeterRegistry.class, () -> registry)
                .run(context -> {
                    assertThat(context).hasSingleBean(MicrometerSyncListener.class);
                    context.getBean(SyncEngine.class).runOnce();
                    assertThat(registry.find("tidemark.cycles").tag("object", "items").counter()).isNotNull();
                });
    }

    @Test
    void customizers_adjust_the_builder_after_the_properties() {
        runner.withBean("audit", Destination.class, () -> batch -> { })
                .withBean(SyncEngineCustomizer.class, () -> builder -> builder.name("customized"))
                .run(context -> {
                    SyncEngine engine = context.getBean(SyncEngine.class);
                    engine.close();
                    assertThat(engine.health().reasons()).containsExactly("engine 'customized' is closed");
                });
    }

    @Test
    void the_lifecycle_starts_the_engine_with_the_context_and_stops_it_with_no_poller_left() {
        runner.withBean("audit", Destination.class, () -> batch -> { })
                .withPropertyValues("tidemark.auto-startup=true", "tidemark.name=lifecycle")
                .run(context -> {
                    assertThat(context.getBean(TidemarkEngineLifecycle.class).isRunning()).isTrue();
                    assertThat(threads("lifecycle-poller-")).isNotEmpty();
                    context.close();
                    assertThat(threads("lifecycle-")).isEmpty();
                });
    }

    private static List<String> threads(String prefix) {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
                .filter(name -> name.startsWith(prefix)).toList();
    }

    private static Throwable rootCause(Throwable failure) {
        Throwable cause = failure;
        while (cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause;
    }

    @SpringBootConfiguration
    @org.springframework.boot.autoconfigure.EnableAutoConfiguration
    static class MinimalApplication {
        @org.springframework.context.annotation.Bean
        DataSource dataSource() {
            return database.dataSource();
        }
    }
}
