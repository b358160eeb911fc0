package io.tidemark.kafka.connect.internal;

import io.tidemark.kafka.connect.TidemarkSourceConfig;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.ChangeProvider;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The JDBC URL picks the provider; nothing connects until a procedure is called. */
class ProvidersTest {

    private static ChangeProvider provider(String url) {
        return Providers.create(new TidemarkSourceConfig(Map.of(
                "connection.url", url,
                "tidemark.objects", "Items",
                "object.Items.procedure", "dbo.ItemsChanges",
                "object.Items.key", "id")));
    }

    @Test
    void a_sqlserver_url_uses_the_sqlserver_provider() {
        try (ChangeProvider provider = provider("jdbc:sqlserver://db.example.com:1433;databaseName=shop")) {
            assertThat(provider.name()).isEqualTo("sqlserver");
            assertThat(provider.sourceIdentity(TrackedObject.of("Items", "dbo.ItemsChanges")))
                    .startsWith("sqlserver:");
        }
    }

    @Test
    void a_postgresql_url_uses_the_postgres_provider() {
        try (ChangeProvider provider = provider("jdbc:postgresql://db.example.com:5432/shop")) {
            assertThat(provider.name()).isEqualTo("postgres");
        }
    }
}
