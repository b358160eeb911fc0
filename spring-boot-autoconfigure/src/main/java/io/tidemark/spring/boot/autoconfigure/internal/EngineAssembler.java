package io.tidemark.spring.boot.autoconfigure.internal;

import io.tidemark.spring.boot.autoconfigure.TidemarkProperties;
import io.tidemark.spring.boot.autoconfigure.TidemarkProperties.DestinationProperties;
import io.tidemark.spring.boot.autoconfigure.TidemarkProperties.DestinationType;
import io.tidemark.spring.boot.autoconfigure.TidemarkProperties.Policy;
import io.tidemark.spring.boot.autoconfigure.TidemarkProperties.Provider;
import io.tidemark.spring.boot.autoconfigure.TidemarkProperties.TrackedObjectProperties;
import io.tidemark.spring.boot.autoconfigure.spi.SyncEngineCustomizer;
import io.tidemark.sync.Coordination;
import io.tidemark.sync.DeliveryPolicy;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.InMemoryDeadLetterStore;
import io.tidemark.sync.InMemoryWatermarkStore;
import io.tidemark.sync.JdbcDeadLetterStore;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.ChangeProvider;
import io.tidemark.sync.spi.Destination;
import io.tidemark.sync.spi.SyncListener;
import io.tidemark.sync.spi.WatermarkStore;

import javax.sql.DataSource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * The one place where {@code tidemark.*} properties become a {@link SyncEngine}: every property is checked first,
 * all problems reported together, each naming its property and what it accepts; then the builder gets the
 * provider, stores, objects, destinations, listeners and customizers. A new engine option is one property in
 * {@link TidemarkProperties}, one line in {@link #check} and one in {@link #builder}.
 *
 * <p>With {@code tidemark.provider=postgres-logical} the objects name tables, and the provider is a log-based
 * capture of them ({@link LogicalCapture}) over the same watermark store as the engine.
 */
public final class EngineAssembler {

    private static final String DESTINATION_TYPES = "bean, webhook, json-lines, jdbc-table";
    private static final String PROVIDERS = "postgres, postgres-logical, sqlserver";

    private final TidemarkProperties properties;
    private final DataSource dataSource;
    private final Map<String, Destination> destinationBeans;
    private final Function<String, DataSource> dataSourceBeans;
    private final Predicate<String> classPresent;
    private final JdbcLogin replicationLogin;

    /**
     * @param destinationBeans    the application's Destination beans by bean name
     * @param dataSourceBeans     a DataSource bean by name, or null when there is none (jdbc-table's data-source)
     * @param classPresent        whether a class is on the class path (optional modules)
     * @param applicationLogin    the application's spring.datasource.* ({@link JdbcLogin#NONE} without them): the
     *                            defaults of the log-based capture's replication connection
     */
    public EngineAssembler(TidemarkProperties properties, DataSource dataSource,
                           Map<String, Destination> destinationBeans, Function<String, DataSource> dataSourceBeans,
                           Predicate<String> classPresent, JdbcLogin applicationLogin) {
        this.properties = properties;
        this.dataSource = dataSource;
        this.destinationBeans = Map.copyOf(destinationBeans);
        this.dataSourceBeans = dataSourceBeans;
        this.classPresent = classPresent;
        TidemarkProperties.Logical logical = properties.getLogical();
        this.replicationLogin = new JdbcLogin(logical.getUrl(), logical.getUsername(), logical.getPassword())
                .orElse(applicationLogin);
    }

    /**
     * Checks the properties, installs the log-based capture when asked, then builds the engine (which checks the
     * rest: procedure names, duplicates). The provider is closed here if the engine cannot be built, and by the
     * returned {@link AssembledEngine} otherwise.
     */
    public AssembledEngine assemble(List<SyncListener> listeners, List<SyncEngineCustomizer> customizers) {
        check();
        WatermarkStore watermarks = watermarkStore();
        ChangeProvider provider;
        BiFunction<String, TrackedObjectProperties, TrackedObject> track;
        if (isLogical()) {
            LogicalCapture capture = new LogicalCapture(properties.getLogical(), properties.getObjects().values());
            capture.installIfAsked(dataSource);
            provider = capture.provider(replicationLogin, watermarks);
            track = (name, object) -> withSettings(capture.track(name, object.getTable()), object);
        } else {
            provider = Modules.provider(properties.getProvider(), dataSource);
            track = EngineAssembler::trackedObject;
        }
        try {
            SyncEngine.Builder builder = builder(provider, watermarks);
            properties.getObjects().forEach((name, object) -> builder.track(track.apply(name, object)));
            listeners.forEach(builder::listener);
            customizers.forEach(customizer -> customizer.customize(builder));
            return new AssembledEngine(builder.build(), provider);
        } catch (RuntimeException e) {
            provider.close();
            throw withInstallHint(e);
        }
    }

    /**
     * The provider's check tells a missing slot or publication in its Java API's terms (install, script()); an
     * application configured by properties is told the property too.
     */
    private RuntimeException withInstallHint(RuntimeException failure) {
        if (!isLogical() || properties.getLogical().isInstall() || !(failure instanceof TidemarkException checked)
                || checked.code() != ErrorCode.CHECK_FAILED) {
            return failure;
        }
        return new TidemarkException(ErrorCode.CHECK_FAILED, checked.getMessage() + "\n  If the replication slot or"
                + " the publication is missing: tidemark.logical.install is false, so nothing installs them; set it"
                + " to true, or have them created from PostgresLogicalCapture.script()", checked);
    }

    private boolean isLogical() {
        return properties.getProvider() == Provider.POSTGRES_LOGICAL;
    }

    void check() {
        Violations v = new Violations();
        v.require(properties.getName() != null && !properties.getName().isBlank(), "tidemark.name", "must not be blank");
        v.positive("tidemark.poll-interval", properties.getPollInterval());
        v.positive("tidemark.shutdown-timeout", properties.getShutdownTimeout());
        v.require(properties.getPageSize() >= 1, "tidemark.page-size",
                "must be at least 1 (was " + properties.getPageSize() + ")");
        v.require(properties.getThreads() == null || properties.getThreads() >= 1, "tidemark.threads",
                "must be at least 1 (was " + properties.getThreads() + ")");
        v.require(properties.getProvider() != Provider.SQLSERVER
                        || classPresent.test(Modules.SQLSERVER_PROVIDER), "tidemark.provider",
                "sqlserver needs tidemark-sqlserver on the class path; allowed values: " + PROVIDERS);
        v.require(properties.getProvider() != Provider.POSTGRES
                        || classPresent.test(Modules.POSTGRES_PROVIDER), "tidemark.provider",
                "postgres needs tidemark-postgres on the class path; allowed values: " + PROVIDERS);
        v.require(properties.getProvider() != Provider.POSTGRES_LOGICAL
                        || classPresent.test(Modules.POSTGRES_LOGICAL_PROVIDER), "tidemark.provider",
                "postgres-logical needs tidemark-postgres on the class path; allowed values: " + PROVIDERS);
        if (isLogical()) {
            LogicalCheck.check(v, properties.getLogical(), replicationLogin,
                    properties.getCoordination().isEnabled());
        }
        v.require(!properties.getStore().getSchema().isBlank(), "tidemark.store.schema", "must not be blank");
        checkCoordination(v, properties.getCoordination());

        v.require(!properties.getObjects().isEmpty(), "tidemark.objects", "no tracked object: add"
                + " tidemark.objects.<name>." + (isLogical() ? "table" : "procedure") + ", or set tidemark.enabled=false");
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
        if (isLogical()) {
            v.require(object.getTable() != null && !object.getTable().isBlank(), prefix + ".table",
                    "required with tidemark.provider=postgres-logical: the table whose changes the object reads");
            if (object.getTable() != null && !object.getTable().isBlank()) {
                LogicalCheck.checkTable(v, prefix + ".table", object.getTable());
            }
            v.require(object.getProcedure() == null, prefix + ".procedure", "must be absent with"
                    + " tidemark.provider=postgres-logical, which reads the table's changes from the WAL, not from a"
                    + " change function (was " + object.getProcedure() + ")");
        } else {
            v.require(object.getProcedure() != null && !object.getProcedure().isBlank(), prefix + ".procedure",
                    "required: the change procedure or function the object is read from");
        }
        if (object.getPollInterval() != null) {
            v.positive(prefix + ".poll-interval", object.getPollInterval());
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
        v.positive(prefix + ".policy.max-delay", policy.getMaxDelay());
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

    /** Property destinations first, in their order, then the beans without an entry, by bean name. */
    private List<String> destinationNames() {
        List<String> names = new ArrayList<>(properties.getDestinations().keySet());
        new TreeSet<>(destinationBeans.keySet()).stream().filter(name -> !names.contains(name)).forEach(names::add);
        return names;
    }

    private SyncEngine.Builder builder(ChangeProvider provider, WatermarkStore watermarks) {
        SyncEngine.Builder builder = SyncEngine.builder()
                .name(properties.getName())
                .provider(provider)
                .watermarks(watermarks)
                .pollInterval(properties.getPollInterval())
                .pageSize(properties.getPageSize())
                .shutdownTimeout(properties.getShutdownTimeout())
                .checkOnBuild(properties.isCheckOnStart());
        if (properties.getThreads() != null) {
            builder.threads(properties.getThreads());
        }
        deadLetterStore(builder);
        TidemarkProperties.Coordination coordination = properties.getCoordination();
        if (coordination.isEnabled()) {
            Coordination.Builder leases = Coordination.builder().leaseDuration(coordination.getLeaseDuration());
            if (coordination.getInstanceId() != null) {
                leases.instanceId(coordination.getInstanceId());
            }
            builder.coordination(leases.build());
        }
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

    /** The engine's watermark store: built once, since the log-based provider must read the very same. */
    private WatermarkStore watermarkStore() {
        TidemarkProperties.Store store = properties.getStore();
        if (store.getType() == TidemarkProperties.StoreType.MEMORY) {
            return InMemoryWatermarkStore.create();
        }
        return JdbcWatermarkStore.builder(dataSource).schema(store.getSchema()).table(store.getTable())
                .deadLetterTable(store.getDeadLetterTable()).createTables(store.isInstall()).build();
    }

    private void deadLetterStore(SyncEngine.Builder builder) {
        TidemarkProperties.Store store = properties.getStore();
        if (!store.isDeadLetters()) {
            return;
        }
        builder.deadLetters(store.getType() == TidemarkProperties.StoreType.MEMORY
                ? InMemoryDeadLetterStore.create()
                : JdbcDeadLetterStore.builder(dataSource).schema(store.getSchema()).stateTable(store.getTable())
                        .table(store.getDeadLetterTable()).createTables(store.isInstall()).build());
    }

    private static TrackedObject trackedObject(String name, TrackedObjectProperties object) {
        TrackedObject tracked = withSettings(TrackedObject.of(name, object.getProcedure()), object);
        return object.getTable() == null ? tracked : tracked.table(object.getTable());
    }

    /** The object's own settings over {@code base}, whichever provider made it. */
    private static TrackedObject withSettings(TrackedObject base, TrackedObjectProperties object) {
        TrackedObject tracked = base.initialSync(object.getInitialSync());
        if (object.getPollInterval() != null) {
            tracked = tracked.pollInterval(object.getPollInterval());
        }
        if (object.getMaxRows() != null) {
            tracked = tracked.maxRows(object.getMaxRows());
        }
        if (object.getPageSize() != null) {
            tracked = tracked.pageSize(object.getPageSize());
        }
        return tracked;
    }

    private static DeliveryPolicy policy(Policy policy) {
        return DeliveryPolicy.builder().maxAttempts(policy.getMaxAttempts()).backoff(policy.getBackoff())
                .maxDelay(policy.getMaxDelay()).whenExhausted(policy.getWhenExhausted()).build();
    }
}
