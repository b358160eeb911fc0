package io.tidemark.examples.readme;

import com.sun.net.httpserver.HttpServer;
import io.tidemark.destinations.files.JsonLinesFileDestination;
import io.tidemark.destinations.jdbc.JdbcTableDestination;
import io.tidemark.destinations.webhook.WebhookAuth;
import io.tidemark.destinations.webhook.WebhookDestination;
import io.tidemark.postgres.PostgresOutbox;
import io.tidemark.postgres.PostgresProvider;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.Change;
import io.tidemark.sync.DeliveryPolicy;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.Operation;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.SyncType;
import io.tidemark.sync.spi.Destination;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import javax.sql.DataSource;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import java.util.zip.GZIPInputStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * destinations/README-*.md: the webhook, files and JDBC table snippets, run as written, and the receiver's signature
 * check run against a real signed request. ReadmeSnippetsTest checks that the documents hold these regions verbatim.
 */
@EmbeddedPostgresTest
class DestinationsSnippetTest {

    @Test
    void the_files_and_jdbc_table_snippets_deliver_a_real_change(DataSource dataSource, TestDatabase database,
                                                                 @TempDir Path exportFolder) throws Exception {
        database.execute("CREATE TABLE public.items (id bigint PRIMARY KEY, name text, price numeric,"
                + " price_eur numeric)");
        database.execute("CREATE SCHEMA reporting");
        database.execute("CREATE TABLE reporting.items (id bigint PRIMARY KEY, name text, price numeric,"
                + " price_eur numeric)");
        PostgresOutbox outbox = PostgresOutbox.forTable("public.items").payloadKey("price_eur", "priceEur").build();
        outbox.install(dataSource);
        DataSource reportingDataSource = dataSource;

        // tag::files[]
        Destination files = JsonLinesFileDestination.builder(exportFolder)   // e.g. Path.of("/var/export/items")
                .prefix("items-export")          // starts every file name; how retention recognises its own files
                .gzip(true)                      // .jsonl.gz
                .rotateAfterLines(100_000)       // and/or .rotateAfterBytes(64L << 20)
                .retainFor(Duration.ofDays(7))   // and/or .retainFiles(500)
                .build();
        // end::files[]
        // tag::jdbc[]
        Destination copy = JdbcTableDestination.postgres(reportingDataSource, "reporting.items")  // or .sqlServer(...)
                .name("reporting-items")              // its key in the position table
                .columns("id", "name", "price")       // columns fed from the change field of the same name
                .column("price_eur", "priceEur")      // a column fed from a field of another name
                .keyColumns("id")                     // what rows are matched on: the primary key or a unique key
                .build();
        // end::jdbc[]

        SyncEngine engine = SyncEngine.builder()
                .provider(PostgresProvider.create(dataSource))
                .watermarks(JdbcWatermarkStore.create(dataSource))
                .track(outbox.track("Items"))
                .destination("files", files)
                .destination("copy", copy)
                .build();
        try (engine) {
            engine.start();
            Await.seeded(engine, "Items");
            database.execute("INSERT INTO public.items VALUES (7, 'Widget', 9.50, 8.75)");
            Await.until("the file and the copied row", Duration.ofSeconds(60),
                    () -> !exported(exportFolder).isEmpty() && copied(dataSource) != null);
        }
        assertThat(copied(dataSource)).isEqualTo("7 Widget 9.50 8.75");
        List<Path> exported = exported(exportFolder);
        assertThat(exported).singleElement().satisfies(file -> {
            assertThat(file.getFileName().toString()).startsWith("items-export").endsWith(".jsonl.gz");
            try (InputStream in = new GZIPInputStream(Files.newInputStream(file))) {
                String line = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                assertThat(line).contains("\"object\":\"Items\"").contains("\"name\":\"Widget\"");
            }
        });
    }

    @Test
    void the_webhook_snippet_builds_an_engine_and_the_receivers_check_accepts_a_real_signature(
            DataSource dataSource, TestDatabase database) throws Exception {
        database.execute("CREATE TABLE public.hooked_items (id bigint PRIMARY KEY, name text)");
        PostgresOutbox outbox = PostgresOutbox.forTable("public.hooked_items").build();
        outbox.install(dataSource);
        String clientSecret = "s3cr3t-client-secret";

        // tag::webhook[]
        Destination hook = WebhookDestination.builder()
                .url("https://hooks.example.com/tidemark")
                .auth(WebhookAuth.oauth2ClientCredentials(URI.create("https://auth.example.com/oauth/token"),
                        "tidemark", clientSecret).scope("changes:write"))
                .signingSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
                .gzip(true)
                .maxRequestBytes(1_000_000)
                .build();

        SyncEngine engine = SyncEngine.builder()
                .provider(PostgresProvider.create(dataSource))
                .watermarks(JdbcWatermarkStore.create(dataSource))
                .track(outbox.track("Items"))
                .destination("hooks", hook, DeliveryPolicy.retryThenBlock(8, Duration.ofSeconds(1)))
                .build();
        // end::webhook[]
        engine.close();
        assertThat(hook.toString()).doesNotContain(clientSecret).doesNotContain("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");

        // A real signed request, received on loopback, checked with the README's recipe.
        String secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        AtomicReference<String[]> received = new AtomicReference<>();
        AtomicReference<byte[]> receivedBody = new AtomicReference<>();
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/hook", exchange -> {
            receivedBody.set(exchange.getRequestBody().readAllBytes());
            received.set(new String[] {exchange.getRequestHeaders().getFirst("webhook-id"),
                    exchange.getRequestHeaders().getFirst("webhook-timestamp"),
                    exchange.getRequestHeaders().getFirst("webhook-signature")});
            exchange.sendResponseHeaders(204, -1);
            exchange.close();
        });
        server.start();
        try {
            Destination signed = WebhookDestination.builder()
                    .url("http://127.0.0.1:" + server.getAddress().getPort() + "/hook")
                    .signingSecret(secret)
                    .build();
            signed.deliver(new ChangeBatch("Items", 10, 11, SyncType.DIFF, 0, List.of(Change.fromRaw(
                    Operation.INSERT, 11L, null, "{\"$operation\":\"I\",\"$version\":11,\"id\":1}"
                            .getBytes(StandardCharsets.UTF_8))), 1, 1, 1));
        } finally {
            server.stop(0);
        }
        String[] headers = received.get();
        assertThat(verify(secret, headers[0], headers[1], receivedBody.get(), headers[2])).isTrue();
        byte[] tampered = receivedBody.get().clone();
        tampered[tampered.length - 2] ^= 1;
        assertThat(verify(secret, headers[0], headers[1], tampered, headers[2])).isFalse();
    }

    /** The receiver's check from destinations/README-webhook.md. */
    private static boolean verify(String secret, String id, String timestamp, byte[] body, String signatureHeader)
            throws Exception {
        // tag::verify[]
        byte[] key = Base64.getDecoder().decode(secret.substring("whsec_".length()));
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(key, "HmacSHA256"));
        mac.update((id + "." + timestamp + ".").getBytes(StandardCharsets.UTF_8));
        byte[] expected = mac.doFinal(body);
        boolean ok = Arrays.stream(signatureHeader.split(" "))
                .filter(s -> s.startsWith("v1,"))
                .anyMatch(s -> MessageDigest.isEqual(expected, Base64.getDecoder().decode(s.substring(3))));
        // end::verify[]
        return ok;
    }

    private static List<Path> exported(Path folder) throws IOException {
        try (Stream<Path> files = Files.list(folder)) {
            return files.filter(f -> f.getFileName().toString().endsWith(".jsonl.gz")).toList();
        }
    }

    private static String copied(DataSource dataSource) throws Exception {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT id, name, price, price_eur FROM reporting.items")) {
            return rs.next() ? rs.getLong(1) + " " + rs.getString(2) + " " + rs.getBigDecimal(3).toPlainString()
                    + " " + rs.getBigDecimal(4).toPlainString() : null;
        }
    }
}
