package io.tidemark.benchmarks.destinations.webhook;

import io.tidemark.destinations.webhook.WebhookDestination;
import io.tidemark.postgres.PostgresProvider;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.InMemoryWatermarkStore;
import io.tidemark.sync.ObjectReport;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.Destination;
import io.tidemark.sync.spi.WatermarkStore;
import io.tidemark.testing.EmbeddedPostgresServer;
import io.tidemark.testing.TestDatabase;

import javax.sql.DataSource;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Webhook delivery throughput against the engine with a counting callback, on the same changes, in the same run.
 *
 * <p>One embedded PostgreSQL database holds N changes in Tidemark's generated outbox. Each round runs, one after
 * the other, a fresh {@link SyncEngine} over {@link PostgresProvider} from the seed version to the end, in pages of
 * 1,000 changes, into (a) a callback that only counts, and (b) a {@link WebhookDestination} POSTing each page to a
 * loopback receiver that reads the body and answers 204 at once; further variants (signed, signed and gzipped)
 * run in the same rounds for information, and (e) the webhook alone: the same pages, kept in memory, delivered
 * straight to it, without database or engine. Two warm-up rounds, then medians of changes per second. The ratio
 * (b)/(a) is the figure the target is set on: at least 0.5.
 *
 * <pre>{@code java -Xmx2g -cp benchmarks/target/benchmarks.jar \
 *     io.tidemark.benchmarks.destinations.webhook.WebhookBenchmark 200000 7}</pre>
 */
public final class WebhookBenchmark {

    private static final String OBJECT = "HookItems";
    private static final int PAGE_SIZE = 1000;
    private static final String SECRET = "whsec_" + Base64.getEncoder().encodeToString(
            "benchmark signing key, 32 bytes!".getBytes(StandardCharsets.US_ASCII));

    private WebhookBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int changes = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 7;
        try (TestDatabase database = EmbeddedPostgresServer.shared().createDatabase();
             LoopbackReceiver receiver = new LoopbackReceiver()) {
            DataSource ds = database.dataSource();
            WebhookSource source = WebhookSource.create(ds, changes);
            Map<String, Destination> variants = new LinkedHashMap<>();
            variants.put("(b) webhook", WebhookDestination.builder().url(receiver.url()).build());
            variants.put("(c) webhook, signed", WebhookDestination.builder().url(receiver.url())
                    .signingSecret(SECRET).build());
            variants.put("(d) webhook, signed + gzip", WebhookDestination.builder().url(receiver.url())
                    .signingSecret(SECRET).gzip(true).build());
            System.out.printf(Locale.ROOT, "webhook benchmark: %,d changes, pages of %,d, %d measured rounds after 2"
                    + " warm-ups; %d cores, load average %.2f at start%n", changes, PAGE_SIZE, rounds,
                    Runtime.getRuntime().availableProcessors(),
                    java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());

            // The pages as the engine hands them over, kept for (e): the webhook alone, without database or engine.
            List<ChangeBatch> pages = new ArrayList<>();
            run(ds, source, pages::add, changes);
            Destination plain = variants.get("(b) webhook");
            List<Double> alone = new ArrayList<>();

            List<Double> callback = new ArrayList<>();
            Map<String, List<Double>> webhook = new LinkedHashMap<>();
            variants.keySet().forEach(k -> webhook.put(k, new ArrayList<>()));
            for (int round = 0; round < rounds + 2; round++) {
                AtomicLong counted = new AtomicLong();
                double a = run(ds, source, batch -> counted.addAndGet(batch.changes().size()), changes);
                if (counted.get() != changes) {
                    throw new IllegalStateException("the callback counted " + counted.get() + " of " + changes);
                }
                if (round >= 2) {
                    callback.add(a);
                }
                for (Map.Entry<String, Destination> variant : variants.entrySet()) {
                    long before = receiver.requests();
                    double b = run(ds, source, variant.getValue(), changes);
                    long requests = receiver.requests() - before;
                    long expected = (changes + PAGE_SIZE - 1) / PAGE_SIZE;
                    if (requests != expected) {
                        throw new IllegalStateException(variant.getKey() + ": the receiver accepted " + requests
                                + " requests, expected one per page: " + expected);
                    }
                    if (round >= 2) {
                        webhook.get(variant.getKey()).add(b);
                    }
                }
                long started = System.nanoTime();
                for (ChangeBatch page : pages) {
                    plain.deliver(page);
                }
                if (round >= 2) {
                    alone.add(changes / ((System.nanoTime() - started) / 1e9));
                }
            }
            double base = median(callback);
            System.out.printf(Locale.ROOT, "(a) counting callback:        median %,9.0f changes/s  (rounds: %s)%n",
                    base, format(callback));
            for (Map.Entry<String, List<Double>> e : webhook.entrySet()) {
                double m = median(e.getValue());
                System.out.printf(Locale.ROOT, "%-30s median %,9.0f changes/s  ratio to (a) %.3f  (rounds: %s)%n",
                        e.getKey() + ":", m, m / base, format(e.getValue()));
            }
            System.out.printf(Locale.ROOT, "%-30s median %,9.0f changes/s  (rounds: %s)%n",
                    "(e) webhook alone, no database:", median(alone), format(alone));
            System.out.printf(Locale.ROOT, "receiver: %,d requests, %,.1f MB of bodies in all%n", receiver.requests(),
                    receiver.bytes() / 1048576.0);
        }
    }

    /** One engine cycle from the seed to the end into {@code destination}; changes per second. */
    private static double run(DataSource ds, WebhookSource source, Destination destination, int changes) {
        TrackedObject object = TrackedObject.of(OBJECT, source.function()).pageSize(PAGE_SIZE);
        try (SyncEngine engine = SyncEngine.builder()
                .provider(PostgresProvider.create(ds))
                .watermarks(startingAt(ds, object, source))
                .track(object)
                .destination("target", destination)
                .build()) {
            long started = System.nanoTime();
            ObjectReport report = engine.runOnce(OBJECT);
            long elapsed = System.nanoTime() - started;
            if (report.outcome() != Outcome.DELIVERED) {
                throw new IllegalStateException("the cycle did not deliver: " + report);
            }
            return changes / (elapsed / 1e9);
        }
    }

    private static WatermarkStore startingAt(DataSource ds, TrackedObject object, WebhookSource source) {
        WatermarkStore store = InMemoryWatermarkStore.create();
        String identity = PostgresProvider.create(ds).sourceIdentity(object);
        store.advance(OBJECT, identity, OptionalLong.empty(), source.seed(), Instant.now());
        return store;
    }

    private static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }

    private static String format(List<Double> values) {
        StringBuilder sb = new StringBuilder();
        for (double v : values) {
            sb.append(sb.length() == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%,.0f", v));
        }
        return sb.toString();
    }
}
