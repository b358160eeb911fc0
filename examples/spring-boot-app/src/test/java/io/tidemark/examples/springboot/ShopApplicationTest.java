package io.tidemark.examples.springboot;

import io.tidemark.testing.EmbeddedPostgresServer;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The example as a user runs it, on an empty embedded PostgreSQL: Flyway creates the table, its outbox and its
 * history; a request by alice is delivered to the audit destination, its history names alice and the reason, and
 * the health endpoint shows the engine's component (rendered by Spring Boot's Jackson 3 while the engine reads change
 * sets with Jackson 2).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ShopApplicationTest {

    private static final TestDatabase DATABASE = EmbeddedPostgresServer.shared().createDatabase();
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @LocalServerPort
    int port;
    @Autowired
    AuditLog audit;

    @DynamicPropertySource
    static void database(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", DATABASE::jdbcUrl);
        registry.add("spring.datasource.username", () -> "postgres");
        registry.add("spring.datasource.password", () -> "");
    }

    @Test
    void a_change_made_through_the_api_is_delivered_and_its_history_names_the_user_and_the_reason() throws Exception {
        HttpResponse<String> put = send(HttpRequest.newBuilder(uri("/items/A-100"))
                .header("Authorization", basic("alice", "change-me"))
                .header("X-Change-Reason", "new catalogue")
                .header("Content-Type", "text/plain")
                .PUT(HttpRequest.BodyPublishers.ofString("Widget")));
        assertThat(put.statusCode()).as(put.body()).isEqualTo(200);

        await().atMost(Duration.ofSeconds(60)).untilAsserted(() ->
                assertThat(audit.recent()).anySatisfy(line -> assertThat(line).startsWith("INSERT A-100")));

        HttpResponse<String> history = send(HttpRequest.newBuilder(uri("/items/A-100/history"))
                .header("Authorization", basic("alice", "change-me")).GET());
        assertThat(history.body()).contains("\"changed_by\":\"alice\"").contains("\"reason\":\"new catalogue\"");

        HttpResponse<String> health = send(HttpRequest.newBuilder(uri("/actuator/health")).GET());
        assertThat(health.statusCode()).as(health.body()).isEqualTo(200);
        assertThat(health.body()).contains("\"tidemark\":{\"status\":\"UP\"");
    }

    @Test
    void the_api_refuses_an_anonymous_write() throws Exception {
        HttpResponse<String> put = send(HttpRequest.newBuilder(uri("/items/B-200"))
                .header("Content-Type", "text/plain").PUT(HttpRequest.BodyPublishers.ofString("Gadget")));
        assertThat(put.statusCode()).isEqualTo(401);
    }

    private URI uri(String path) {
        return URI.create("http://localhost:" + port + path);
    }

    private static String basic(String user, String password) {
        return "Basic " + Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
    }

    private static HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
