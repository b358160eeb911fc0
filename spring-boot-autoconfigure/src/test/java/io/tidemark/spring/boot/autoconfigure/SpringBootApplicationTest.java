package io.tidemark.spring.boot.autoconfigure;

import io.tidemark.history.TemporalTable;
import io.tidemark.postgres.PostgresOutbox;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.spi.Destination;
import io.tidemark.testing.EmbeddedPostgresServer;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.test.context.ContextConfiguration;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * One Spring Boot application with the README's application.yml on the embedded PostgreSQL: the engine delivers, the
 * health indicator moves from UP to DEGRADED when a destination refuses, history rows carry the principal and the
 * reason of the web request, and closing the context leaves no poller thread.
 */
@SpringBootTest(classes = SpringBootApplicationTest.ShopApplication.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@ContextConfiguration(initializers = ReadmeYaml.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SpringBootApplicationTest {

    private static final TestDatabase DATABASE = EmbeddedPostgresServer.shared().createDatabase();
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @TempDir
    static Path exportFolder;

    @Autowired
    SyncEngine engine;
    @Autowired
    AuditDestination audit;
    @Autowired
    TidemarkHealthIndicator health;
    @Autowired
    JdbcTemplate jdbc;
    @LocalServerPort
    int port;

    /** The application's table, its outbox and its history exist before the application starts, as in production. */
    @DynamicPropertySource
    static void database(DynamicPropertyRegistry registry) {
        DATABASE.execute("CREATE TABLE public.items (item_code text PRIMARY KEY, description text)");
        PostgresOutbox.forTable("public.items").build().install(DATABASE.dataSource());
        TemporalTable.forTable("public.items").build().install(DATABASE.dataSource());
        registry.add("spring.datasource.url", DATABASE::jdbcUrl);
        registry.add("spring.datasource.username", () -> "postgres");
        registry.add("spring.datasource.password", () -> "");
        registry.add("tidemark.destinations.export.json-lines.folder", () -> exportFolder.toString());
    }

    @Test
    @Order(1)
    void the_readme_configuration_builds_the_engine_the_test_runs() {
        assertThat(ReadmeYaml.text()).contains("procedure: public.items_changes").contains("audit:");
        assertThat(engine.trackedObjects()).extracting(object -> object.name()).containsExactly("items");
    }

    @Test
    @Order(2)
    void a_change_made_by_a_web_request_is_delivered_and_its_history_names_the_principal_and_the_reason()
            throws Exception {
        HttpResponse<String> response = put("/items/A-100", "Widget", "price list 2026");
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);

        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(audit.itemCodes()).contains("A-100"));
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(exportedLines()).anySatisfy(
                line -> assertThat(line).contains("A-100")));

        Map<String, Object> history = jdbc.queryForMap(
                "SELECT changed_by, reason FROM public.items_history WHERE item_code = 'A-100' AND operation = 1");
        assertThat(history).containsEntry("changed_by", "alice").containsEntry("reason", "price list 2026");
        assertThat(health.health().getStatus()).isEqualTo(Status.UP);
    }

    @Test
    @Order(3)
    void the_health_indicator_turns_degraded_with_the_reason_when_a_destination_refuses() throws Exception {
        audit.refuse = true;
        assertThat(put("/items/B-200", "Gadget", null).statusCode()).isEqualTo(200);

        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            var current = health.health();
            assertThat(current.getStatus()).isEqualTo(TidemarkHealthIndicator.DEGRADED);
            assertThat(current.getDetails().get("reasons")).asString().contains("destination 'audit'");
        });
        // The other destination carries on: a refusing destination holds back only itself.
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(exportedLines()).anySatisfy(
                line -> assertThat(line).contains("B-200")));
    }

    @Test
    @Order(4)
    void closing_the_application_stops_the_engine_and_leaves_no_poller_thread() {
        // A second instance of the same application, closed here (the one above belongs to the test framework).
        ConfigurableApplicationContext application = new SpringApplicationBuilder(ShopApplication.class)
                .initializers(new ReadmeYaml())
                .run("--spring.datasource.url=" + DATABASE.jdbcUrl(), "--spring.datasource.username=postgres",
                        "--spring.datasource.password=", "--server.port=0", "--tidemark.name=second",
                        "--tidemark.destinations.export.json-lines.folder=" + exportFolder);
        assertThat(engineThreads("second-poller-")).as("the engine polls while the application runs").isNotEmpty();
        SyncEngine second = application.getBean(SyncEngine.class);

        application.close();

        assertThat(engineThreads("second-")).isEmpty();
        assertThat(second.health().status())
                .isEqualTo(io.tidemark.sync.EngineHealth.Status.DOWN);
    }

    /** The engine's threads (pollers, probes, the provider's listener) are named after the engine. */
    private static List<String> engineThreads(String prefix) {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
                .filter(name -> name.startsWith(prefix)).toList();
    }

    private List<String> exportedLines() throws Exception {
        try (Stream<Path> files = Files.list(exportFolder)) {
            return files.filter(file -> !file.getFileName().toString().startsWith("."))
                    .flatMap(file -> {
                        try {
                            return Files.readAllLines(file, StandardCharsets.UTF_8).stream();
                        } catch (java.io.IOException e) {
                            throw new java.io.UncheckedIOException(e);
                        }
                    }).toList();
        }
    }

    private HttpResponse<String> put(String path, String body, String reason) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                .header("Authorization", "Basic " + Base64.getEncoder().encodeToString(
                        "alice:secret".getBytes(StandardCharsets.UTF_8)))
                .header("Content-Type", "text/plain")
                .PUT(HttpRequest.BodyPublishers.ofString(body));
        if (reason != null) {
            request.header("X-Change-Reason", reason);
        }
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    @SpringBootApplication
    static class ShopApplication {

        @Bean
        AuditDestination audit() {
            return new AuditDestination();
        }

        @Bean
        InMemoryUserDetailsManager users() {
            return new InMemoryUserDetailsManager(User.withUsername("alice").password("{noop}secret").roles("CLERK")
                    .build());
        }

        @Bean
        SecurityFilterChain security(HttpSecurity http) throws Exception {
            return http.authorizeHttpRequests(requests -> requests.anyRequest().authenticated())
                    .httpBasic(Customizer.withDefaults())
                    .csrf(csrf -> csrf.disable())
                    .build();
        }

        @Bean
        ItemsController itemsController(JdbcTemplate jdbc) {
            return new ItemsController(jdbc);
        }
    }

    @RestController
    static class ItemsController {
        private final JdbcTemplate jdbc;

        ItemsController(JdbcTemplate jdbc) {
            this.jdbc = jdbc;
        }

        @PutMapping("/items/{code}")
        String put(@PathVariable("code") String code, @RequestBody String description) {
            jdbc.update("INSERT INTO public.items VALUES (?, ?) ON CONFLICT (item_code) DO UPDATE"
                    + " SET description = excluded.description", code, description);
            return "ok";
        }
    }

    /** The application's own destination ("audit" in the README): records item codes, refuses when told to. */
    static class AuditDestination implements Destination {
        private final List<String> itemCodes = new CopyOnWriteArrayList<>();
        volatile boolean refuse;

        @Override
        public void deliver(ChangeBatch batch) {
            if (refuse) {
                throw new IllegalStateException("audit service unavailable");
            }
            batch.changes().forEach(change -> itemCodes.add(change.field("item_code").orElseThrow().asText()));
        }

        List<String> itemCodes() {
            return itemCodes;
        }
    }
}
