package io.tidemark.sync.internal.engine;

import io.tidemark.sync.DeliveryPolicy;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.InMemoryWatermarkStore;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.ChangeProvider;
import io.tidemark.sync.spi.DeadLetterStore;
import io.tidemark.sync.spi.SyncListener;
import io.tidemark.sync.spi.WatermarkStore;

import java.time.Clock;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** The engine's validated, immutable configuration. */
public final class EngineConfig {

    public static final Duration DEFAULT_POLL_INTERVAL = Duration.ofSeconds(30);
    public static final int DEFAULT_PAGE_SIZE = 1000;
    public static final Duration DEFAULT_SHUTDOWN_TIMEOUT = Duration.ofSeconds(30);
    private static final int DEFAULT_MAX_THREADS = 4;

    private final String name;
    private final ChangeProvider provider;
    private final WatermarkStore watermarks;
    private final DeadLetterStore deadLetters;
    private final List<TrackedObject> objects;
    private final List<NamedDestination> destinations;
    private final List<SyncListener> listeners;
    private final Duration pollInterval;
    private final int pageSize;
    private final int threads;
    private final Duration shutdownTimeout;
    private final Clock clock;

    public EngineConfig(String name, ChangeProvider provider, WatermarkStore watermarks, DeadLetterStore deadLetters,
                        List<TrackedObject> objects, List<NamedDestination> destinations, List<SyncListener> listeners,
                        Duration pollInterval, int pageSize, Integer threads, Duration shutdownTimeout, Clock clock) {
        this.name = require(name, "name");
        if (name.isBlank()) {
            throw invalid("The engine name must not be blank");
        }
        this.provider = require(provider, "provider (for example PostgresProvider.create(dataSource))");
        this.watermarks = require(watermarks, "watermark store (JdbcWatermarkStore.create(dataSource) or InMemoryWatermarkStore.create())");
        this.deadLetters = deadLetters;
        this.objects = List.copyOf(objects);
        this.destinations = List.copyOf(destinations);
        this.listeners = List.copyOf(listeners);
        this.pollInterval = positive(pollInterval, "pollInterval");
        if (pageSize < 1) {
            throw invalid("pageSize must be at least 1, got " + pageSize);
        }
        this.pageSize = pageSize;
        this.shutdownTimeout = require(shutdownTimeout, "shutdownTimeout");
        if (shutdownTimeout.isNegative()) {
            throw invalid("shutdownTimeout must not be negative, got " + shutdownTimeout);
        }
        this.clock = require(clock, "clock");

        if (this.objects.isEmpty()) {
            throw invalid("Track at least one object: builder.track(TrackedObject.of(name, procedure))");
        }
        if (this.destinations.isEmpty()) {
            throw invalid("Add at least one destination: builder.destination(name, batch -> ...)");
        }
        unique(this.objects.stream().map(TrackedObject::name).toList(), "tracked object");
        unique(this.destinations.stream().map(NamedDestination::name).toList(), "destination");
        boolean needsDeadLetters = this.destinations.stream()
                .anyMatch(d -> d.policy().whenExhausted() == DeliveryPolicy.WhenExhausted.DEAD_LETTER);
        if (needsDeadLetters && deadLetters == null) {
            throw invalid("A destination dead-letters refused pages, but no dead-letter store is configured:"
                    + " add builder.deadLetters(JdbcDeadLetterStore.create(dataSource))");
        }
        int wanted = threads == null ? Math.min(this.objects.size(), DEFAULT_MAX_THREADS) : threads;
        if (wanted < 1) {
            throw invalid("threads must be at least 1, got " + wanted);
        }
        this.threads = wanted;
        // Refuse unsafe procedure names now, before the first cycle could run any SQL.
        this.objects.forEach(provider::validate);
    }

    private static <T> T require(T value, String what) {
        if (value == null) {
            throw invalid("The engine needs a " + what);
        }
        return value;
    }

    private static Duration positive(Duration d, String what) {
        if (d == null || d.isNegative() || d.isZero()) {
            throw invalid(what + " must be a positive duration, got " + d);
        }
        return d;
    }

    private static void unique(List<String> names, String what) {
        Set<String> seen = new HashSet<>();
        for (String n : names) {
            if (!seen.add(n)) {
                throw invalid("Two " + what + "s are named '" + n + "'; names must be unique");
            }
        }
    }

    private static TidemarkException invalid(String message) {
        return new TidemarkException(ErrorCode.INVALID_CONFIGURATION, message);
    }

    public String name() {
        return name;
    }

    public ChangeProvider provider() {
        return provider;
    }

    public WatermarkStore watermarks() {
        return watermarks;
    }

    public DeadLetterStore deadLetters() {
        return deadLetters;
    }

    public List<TrackedObject> objects() {
        return objects;
    }

    public List<NamedDestination> destinations() {
        return destinations;
    }

    public List<SyncListener> listeners() {
        return listeners;
    }

    public Duration pollInterval(TrackedObject object) {
        return object.pollInterval().orElse(pollInterval);
    }

    public int pageSize(TrackedObject object) {
        return object.pageSize().orElse(pageSize);
    }

    public int threads() {
        return threads;
    }

    public Duration shutdownTimeout() {
        return shutdownTimeout;
    }

    public Clock clock() {
        return clock;
    }
}
