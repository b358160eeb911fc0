package io.tidemark.spring.boot.autoconfigure.internal;

import io.tidemark.spring.boot.autoconfigure.TidemarkProperties;
import io.tidemark.spring.boot.autoconfigure.TidemarkProperties.DestinationProperties;
import io.tidemark.spring.boot.autoconfigure.TidemarkProperties.DestinationType;
import io.tidemark.spring.boot.autoconfigure.TidemarkProperties.Policy;
import io.tidemark.spring.boot.autoconfigure.TidemarkProperties.TrackedObjectProperties;
import io.tidemark.spring.boot.autoconfigure.spi.SyncEngineCustomizer;
import io.tidemark.sync.Coordination;
import io.tidemark.sync.DeliveryPolicy;
import io.tidemark.sync.InMemoryDeadLetterStore;
import io.tidemark.sync.InMemoryWatermarkStore;
import io.tidemark.sync.JdbcDeadLetterStore;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.Destination;
import io.tidemark.sync.spi.SyncListener;

import javax.sql.DataSource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * The one place where {@code tidemark.*} properties become a {@link SyncEngine}: every property is checked first,
 * all problems reported together, each naming its property and what it accepts; then the builder gets the
 * provider, stores, objects, destinations, listeners and customizers. A new engine option is one property in
 * {@link TidemarkProperties}, one line in {@link #check} and one in {@link #builder}.
 */
public final class EngineAssembler {

    private static final String DESTINATION_TYPES = "bean, webhook, json-lines, jdbc-table";

    private final TidemarkProperties properties;
    private final DataSource dataSource;
    private final Map<String, Destination> destinationBeans;
    private final Function<String, DataSource> dataSourceBeans;
    private final Predicate<String> classPresent;

    /**
     * @param destinationBeans the application's Destination beans by bean name
     * @param dataSourceBeans  a DataSource bean by name, or null when there is none (jdbc-table's data-source)
     * @param classPresent     whether a class is on the class path (optional modules)
     */
    public EngineAssembler(TidemarkProperties properties, DataSource dataSource,
                           Map<String, Destination> destinationBeans, Function<String, DataSource> dataSourceBeans,
                           Predicate<String> classPresent) {
        this.properties = properties;
        this.dataSource = dataSource;
        this.destinationBeans = Map.copyOf(destinationBeans);
        this.dataSourceBeans = dataSourceBeans;
        this.classPresent = classPresent;
    }

    /** Checks the properties, then builds the engine (which checks the rest: procedure names, duplicates). */
    public SyncEngine assemble(List<SyncListener> listeners, List<SyncEngineCustomizer> customizers) {
        check();
        SyncEngine.Builder builder = builder();
        listeners.forEach(builder::listener);
        customizers.forEach(customizer -> customizer.customize(builder));
        return builder.build();
    }

    void check() {
        Violations v = new Violations();
        v.require(properties.getName() != null && !properties.getName().isBlank(), "tidemark.name", "must not be blank");
        positive(v, "tidemark.poll-interval", properties.getPollInterval());
        positive(v, "tidemark.shutdown-timeout", properties.getShutdownTimeout());
        v.require(properties.getPageSize() >= 1, "tidemark.page-size",
                "must be at least 1 (was " + properties.getPageSize() + ")");
        v.require(properties.getThreads() == null || properties.getThreads() >= 1, "tidemark.threads",
                "must be at least 1 (was " + properties.getThreads() + ")");
        v.require(properties.getProvider() != TidemarkProperties.Provider.SQLSERVER
                        || classPresent.test(Modules.SQLSERVER_PROVIDER), "tidemark.provider",
                "sqlserver needs tidemark-sqlserver on the class path; allowed values: postgres, sqlserver");
        v.require(properties.getProvider() != TidemarkProperties.Provider.POSTGRES
                        || classPresent.test(Modules.POSTGRES_PROVIDER), "tidemark.provider",
                "postgres needs tidemark-postgres on the class path; allowed values: postgres, sqlserver");
        v.require(!properties.getStore().getSchema().isBlank(), "tidemark.store.schema", "must not be blank");
        checkCoordination(v, properties.getCoordination());

        v.require(!properties.getObjects().isEmpty(), "tidemark.objects",
                "no tracked object: add tidemark.objects.<name>.procedure, or set tidemark.enabled=false");
        properties.getObjects().forEach((name, object) -> checkObject(v, "tidemark.objects." + name, object));

        List<String> names = destinationNames();
        v.require(!names.isEmpty(), "tidemark.destinations",
                "no destination: declare a Destination bean, or tidemark.destinations.<name>.type (one of "
                        + DESTINATION_TYPES + ")");
        properties.getDestinations().forEach((name, destination) ->
                checkDestination(v, "tidemark.destinations." + name, name, destination));
        v.throwIfAny();
    }

    private void checkCoordination(Violations v, TidemarkProperties.Coordination coordination) {
        if (!coordination.isEnabled()) {
            return;
        }
        v.require(properties.getStore().getType() == TidemarkProperties.StoreType.JDBC, "tidemark.coordination.enabled",
                "true needs tidemark.store.type=jdbc: the leases live beside the watermarks, in the same database");
        v.require(coordination.getLeaseDuration() != null
                        && coordination.getLeaseDuration().compareTo(Duration.ofSeconds(1)) >= 0,
                "tidemark.coordination.lease-duration",
                "must be at least 1s (was " + coordination.getLeaseDuration() + ")");
        v.require(coordination.getInstanceId() == null || !coordination.getInstanceId().isBlank(),
                "tidemark.coordination.instance-id", "must not be blank; leave it unset for a generated id");
    }

    private void checkObject(Violations v, String prefix, TrackedObjectProperties object) {
        v.require(object.getProcedure() != null && !object.getProcedure().isBlank(), prefix + ".procedure",
                "required: the change procedure or function the object is read from");
        if (object.getPollInterval() != null) {
            positive(v, prefix + ".poll-interval", object.getPollInterval());
        }
        v.require(object.getMaxRows() == null || object.getMaxRows() >= 1, prefix + ".max-rows",
                "must be at least 1 (was " + object.getMaxRows() + ")");
        v.require(object.getPageSize() == null || object.getPageSize() >= 1, prefix + ".page-size",
                "must be at least 1 (was " + object.getPageSize() + ")");
    }

    private void checkDestination(Violations v, String prefix, String name, DestinationProperties destination) {
        Policy policy = destination.getPolicy();
        v.require(policy.getMaxAttempts() >= 1, prefix + ".policy.max-attempts",
                "must be at least 1 (was " + policy.getMaxAttempts() + ")");
        v.require(policy.getBackoff() != null && !policy.getBackoff().isNegative(), prefix + ".policy.backoff",
                "must be zero or a positive duration such as 200ms (was " + policy.getBackoff() + ")");
        positive(v, prefix + ".policy.max-delay", policy.getMaxDelay());
        if (policy.getWhenExhausted() == DeliveryPolicy.WhenExhausted.DEAD_LETTER) {
            v.require(properties.getStore().isDeadLetters(), prefix + ".policy.when-exhausted",
                    "dead-letter needs the dead-letter store: set tidemark.store.dead-letters=true, or use block");
        }
        DestinationType type = destination.getType();
        if (type == DestinationType.BEAN) {
            v.require(destinationBeans.containsKey(name), prefix + ".type",
                    "bean (the default), but there is no Destination bean named '" + name + "' (Destination beans: "
                            + new TreeSet<>(destinationBeans.keySet()) + "); allowed types: " + DESTINATION_TYPES);
            return;
        }
        v.require(!destinationBeans.containsKey(name), prefix + ".type", type.name().toLowerCase().replace('_', '-')
                + ", but a Destination bean has the same name; rename one of them");
        if (!classPresent.test(Modules.DESTINATIONS)) {
            v.add(prefix + ".type", type.name().toLowerCase().replace('_', '-')
                    + " needs tidemark-destinations on the class path (it comes with tidemark-spring-boot-starter)");
            return;
        }
        PropertyDestinations.check(v, prefix, destination, dataSourceBeans);
    }

    private static void positive(Violations v, String property, Duration duration) {
        v.require(duration != null && !duration.isNegative() && !duration.isZero(), property,
                "must be a positive duration such as 500ms, 30s or 5m (was " + duration + ")");
    }

    /** Property destinations first, in their order, then the beans without an entry, by bean name. */
    private List<String> destinationNames() {
        List<String> names = new ArrayList<>(properties.getDestinations().keySet());
        new TreeSet<>(destinationBeans.keySet()).stream().filter(name -> !names.contains(name)).forEach(names::add);
        return names;
    }

    private SyncEngine.Builder builder() {
        SyncEngine.Builder builder = SyncEngine.builder()
                .name(properties.getName())
                .provider(Modules.provider(properties.getProvider(), dataSource))
                .pollInterval(properties.getPollInterval())
                .pageSize(properties.getPageSize())
                .shutdownTimeout(properties.getShutdownTimeout())
                .checkOnBuild(properties.isCheckOnStart());
        if (properties.getThreads() != null) {
            builder.threads(properties.getThreads());
        }
        stores(builder);
        TidemarkProperties.Coordination coordination = properties.getCoordination();
        if (coordination.isEnabled()) {
            Coordination.Builder leases = Coordination.builder().leaseDuration(coordination.getLeaseDuration());
            if (coordination.getInstanceId() != null) {
                leases.instanceId(coordination.getInstanceId());
            }
            builder.coordination(leases.build());
        }
        properties.getObjects().forEach((name, object) -> builder.track(trackedObject(name, object)));
        for (String name : destinationNames()) {
            DestinationProperties destination = properties.getDestinations().get(name);
            if (destination == null) {
                builder.destination(name, destinationBeans.get(name));
                continue;
            }
            Destination target = destination.getType() == DestinationType.BEAN
                    ? destinationBeans.get(name)
                    : PropertyDestinations.create(name, destination, dataSource, dataSourceBeans);
            builder.destination(name, target, policy(destination.getPolicy()), destination.getStart());
        }
        return builder;
    }

    private void stores(SyncEngine.Builder builder) {
        TidemarkProperties.Store store = properties.getStore();
        if (store.getType() == TidemarkProperties.StoreType.MEMORY) {
            builder.watermarks(InMemoryWatermarkStore.create());
            if (store.isDeadLetters()) {
                builder.deadLetters(InMemoryDeadLetterStore.create());
            }
            return;
        }
        builder.watermarks(JdbcWatermarkStore.builder(dataSource).schema(store.getSchema()).table(store.getTable())
                .deadLetterTable(store.getDeadLetterTable()).createTables(store.isInstall()).build());
        if (store.isDeadLetters()) {
            builder.deadLetters(JdbcDeadLetterStore.builder(dataSource).schema(store.getSchema())
                    .stateTable(store.getTable()).table(store.getDeadLetterTable())
                    .createTables(store.isInstall()).build());
        }
    }

    private static TrackedObject trackedObject(String name, TrackedObjectProperties object) {
        TrackedObject tracked = TrackedObject.of(name, object.getProcedure()).initialSync(object.getInitialSync());
        if (object.getPollInterval() != null) {
            tracked = tracked.pollInterval(object.getPollInterval());
        }
        if (object.getMaxRows() != null) {
            tracked = tracked.maxRows(object.getMaxRows());
        }
        if (object.getPageSize() != null) {
            tracked = tracked.pageSize(object.getPageSize());
        }
        if (object.getTable() != null) {
            tracked = tracked.table(object.getTable());
        }
        return tracked;
    }

    private static DeliveryPolicy policy(Policy policy) {
        return DeliveryPolicy.builder().maxAttempts(policy.getMaxAttempts()).backoff(policy.getBackoff())
                .maxDelay(policy.getMaxDelay()).whenExhausted(policy.getWhenExhausted()).build();
    }
}
