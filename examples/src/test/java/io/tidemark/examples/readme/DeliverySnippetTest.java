package io.tidemark.examples.readme;

import io.tidemark.postgres.PostgresOutbox;
import io.tidemark.postgres.PostgresProvider;
import io.tidemark.sync.DeadLetters;
import io.tidemark.sync.DeliveryPolicy;
import io.tidemark.sync.JdbcDeadLetterStore;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.ReplayResult;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.spi.DeadLetter;
import io.tidemark.sync.spi.DeliveryException;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.RecordingDestination;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * docs/operations.md, "Destinations and failures" and "Dead letters": the policy, the replay calls and the upgrade
 * call, run as written against a real engine whose destination refuses until it is fixed. ReadmeSnippetsTest checks
 * that the document holds these regions verbatim.
 */
@EmbeddedPostgresTest
class DeliverySnippetTest {

    @Test
    void the_policy_builder_sets_what_it_says() {
        // tag::policy[]
        DeliveryPolicy policy = DeliveryPolicy.builder()
                .maxAttempts(6).backoff(Duration.ofMillis(200)).maxDelay(Duration.ofSeconds(10))
                .whenExhausted(DeliveryPolicy.WhenExhausted.BLOCK)   // the default; or DEAD_LETTER
                .build();
        // end::policy[]
        assertThat(policy.maxAttempts()).isEqualTo(6);
        assertThat(policy.backoff()).isEqualTo(Duration.ofMillis(200));
        assertThat(policy.maxDelay()).isEqualTo(Duration.ofSeconds(10));
        assertThat(policy.whenExhausted()).isEqualTo(DeliveryPolicy.WhenExhausted.BLOCK);
    }

    @Test
    void a_refused_page_is_a_letter_that_the_replay_calls_deliver_to_that_destination_only(
            DataSource dataSource, TestDatabase database) throws Exception {
        database.execute("CREATE TABLE public.items (id bigint PRIMARY KEY, name text)");
        PostgresOutbox outbox = PostgresOutbox.forTable("public.items").build();
        outbox.install(dataSource);
        AtomicBoolean auditDown = new AtomicBoolean(true);
        RecordingDestination audit = new RecordingDestination();
        RecordingDestination search = new RecordingDestination();

        SyncEngine engine = SyncEngine.builder()
                .provider(PostgresProvider.create(dataSource))
                .watermarks(JdbcWatermarkStore.create(dataSource))
                .deadLetters(JdbcDeadLetterStore.create(dataSource))
                .track(outbox.track("Items"))
                .destination("audit", batch -> {
                    if (auditDown.get()) {
                        throw DeliveryException.fatal("audit is down", null);
                    }
                    audit.deliver(batch);
                }, DeliveryPolicy.deadLetterAfter(1, Duration.ZERO))
                .destination("search", search)
                .build();
        try (engine) {
            engine.start();
            Await.seeded(engine, "Items");
            database.execute("INSERT INTO public.items VALUES (1, 'first'), (2, 'second')");
            search.awaitChanges(2, Duration.ofSeconds(30));
            Await.until("a dead letter", Duration.ofSeconds(30), () -> !engine.deadLetters().list("Items").isEmpty());
            auditDown.set(false);
            long letterId = engine.deadLetters().list("Items", "audit").get(0).id();

            // tag::replay[]
            DeadLetters letters = engine.deadLetters();
            letters.list("Items");                        // every destination's letters, in version order
            letters.list("Items", "audit");              // one destination's
            ReplayResult one = letters.replay(letterId);  // one letter
            ReplayResult all = letters.replayAll("Items", "audit");
            letters.discard(letterId);                    // give up on a letter
            letters.purge(Duration.ofDays(30));           // see Purge below
            // end::replay[]

            assertThat(one.delivered()).isEqualTo(1);
            assertThat(all.delivered()).isZero();           // the only letter went with the first call
            assertThat(audit.changes()).hasSize(2);
            assertThat(search.changes()).as("the other destination is not replayed to").hasSize(2);
            List<DeadLetter> left = letters.list("Items");
            assertThat(left).isEmpty();
        }

        // tag::upgrade[]
        JdbcDeadLetterStore.builder(dataSource).createTables(false).build().upgrade();
        // end::upgrade[]
        assertThat(JdbcDeadLetterStore.builder(dataSource).createTables(false).build().list("Items")).isEmpty();
    }
}
