package io.tidemark.sqlserver;

import io.tidemark.sqlserver.internal.AgedOutCheck;
import io.tidemark.sqlserver.internal.PreflightRunner;
import io.tidemark.sqlserver.internal.ProcedureCall;
import io.tidemark.sqlserver.internal.ProcedureCheck;
import io.tidemark.sqlserver.internal.WatermarkReader;
import io.tidemark.sync.CheckReport;
import io.tidemark.sync.Diagnostic;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.internal.config.Checks;
import io.tidemark.sync.internal.config.Defaults;
import io.tidemark.sync.spi.CallContext;
import io.tidemark.sync.spi.ChangeProvider;
import io.tidemark.sync.internal.jdbc.ReachabilityProbe;
import io.tidemark.sync.spi.ChangeRequest;
import io.tidemark.sync.spi.ResponsePayload;
import io.tidemark.sync.internal.sql.SqlServerName;

import javax.sql.DataSource;
import java.time.Duration;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Calls SQL Server change procedures: {@code SET NOCOUNT ON; EXEC [schema].[procedure] @Json = ?}, with the
 * request bound as {@code NVARCHAR(MAX)}.
 *
 * <pre>{@code
 * SqlServerProvider provider = SqlServerProvider.create(dataSource);
 * provider.preflight(TrackedObject.of("Items", "dbo.get_item_changes").table("dbo.Items")).throwIfFailed();
 * SyncEngine engine = SyncEngine.builder().provider(provider) ... .build();
 * }</pre>
 *
 * <p>The procedure takes one {@code @Json NVARCHAR(MAX)} parameter and returns one JSON document, usually with
 * {@code FOR JSON PATH, WITHOUT_ARRAY_WRAPPER}; {@link ChangeProcedureGenerator} writes a correct one for a
 * Change Tracking table. Its name is checked and bracket-quoted before any SQL runs.
 *
 * <p>The document is read as a character stream across the rows SQL Server splits it into, spooled (memory, then
 * a temporary file), and the connection is given back before anything is delivered: memory stays bounded however
 * large the change set, and no connection or transaction is held while destinations work.
 *
 * <p>For an {@link io.tidemark.sync.InitialSync#INCREMENTAL} first cycle the provider reads the server's current
 * version itself ({@link WatermarkQuery#changeTracking()} unless configured), so procedures never see
 * {@code mode: "seed"}. After each cycle of an object with a {@link TrackedObject#table(String) table}, it reports a
 * watermark older than {@code CHANGE_TRACKING_MIN_VALID_VERSION} as a {@code WATERMARK_AGED_OUT} diagnostic.
 *
 * <p>Thread-safe. Connections come from the data source for each call and go back at once; a pool is
 * recommended.
 */
public final class SqlServerProvider implements ChangeProvider {

    /** The default command timeout, as in the procedure contract. */
    public static final Duration DEFAULT_COMMAND_TIMEOUT = Defaults.COMMAND_TIMEOUT;

    private final DataSource dataSource;
    private final int timeoutSeconds;
    private final WatermarkQuery defaultWatermark;
    private final Map<String, WatermarkQuery> watermarks;
    private final ProcedureCall calls;
    private final WatermarkReader watermarkReader;
    private final AgedOutCheck agedOut;
    private final Map<String, Names> names = new ConcurrentHashMap<>();

    private SqlServerProvider(Builder builder) {
        this.dataSource = builder.dataSource;
        this.timeoutSeconds = (int) builder.commandTimeout.toSeconds(); // range checked by build()
        this.defaultWatermark = builder.watermarkQuery;
        this.watermarks = Map.copyOf(builder.queriesByObject());
        this.calls = new ProcedureCall(dataSource, timeoutSeconds);
        this.watermarkReader = new WatermarkReader(dataSource, timeoutSeconds);
        this.agedOut = builder.agedOutCheck ? new AgedOutCheck(dataSource, timeoutSeconds) : null;
    }

    /** A provider with the defaults: 300 s command timeout, Change Tracking watermarks, the aged-out check on. */
    public static SqlServerProvider create(DataSource dataSource) {
        return builder(dataSource).build();
    }

    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    @Override
    public String name() {
        return "sqlserver";
    }

    /** Refuses a procedure or table name that is not a safe SQL Server name, before any SQL runs. */
    @Override
    public void validate(TrackedObject object) {
        names(object);
    }

    /**
     * Connects once and looks each object's procedure up: it must exist, be a stored procedure and take
     * {@code @Json NVARCHAR(MAX)}. Every problem is reported; an unreachable database is {@code CONNECTION_FAILED}.
     * {@link #preflight} checks more (Change Tracking, snapshot isolation, permissions).
     */
    @Override
    public List<CheckReport.Problem> check(Collection<TrackedObject> objects) {
        List<CheckReport.Problem> problems = new ArrayList<>();
        List<ProcedureCheck.Target> targets = new ArrayList<>();
        for (TrackedObject object : objects) {
            try {
                targets.add(new ProcedureCheck.Target(object.name(), names(object).quotedProcedure));
            } catch (TidemarkException e) {
                problems.add(new CheckReport.Problem(object.name(), e.code(), e.getMessage()));
            }
        }
        problems.addAll(new ProcedureCheck(dataSource, timeoutSeconds).run("provider " + name(), targets));
        return problems;
    }

    /**
     * {@code sqlserver:} and the procedure as it is called, bracket-quoted ({@code sqlserver:[dbo].[GetItemChanges]});
     * stored with the object's watermark so that a re-pointed object does not continue from it.
     */
    @Override
    public String sourceIdentity(TrackedObject object) {
        return name() + ":" + names(object).quotedProcedure;
    }

    @Override
    public ResponsePayload invoke(TrackedObject object, ChangeRequest request, CallContext context) {
        Names resolved = names(object);
        if (agedOut != null && resolved.quotedTable != null && request.mode() == ChangeRequest.Mode.SYNC) {
            agedOut.requested(object, request.fromVersion());
        }
        return calls.invoke(resolved.callSql, object, request, context);
    }

    /** The object's {@link WatermarkQuery}: never empty, so the engine never sends {@code mode: "seed"}. */
    /** {@code SELECT 1} on a connection from the data source: whether the database answers now. */
    @Override
    public Reachability probe(Duration timeout) {
        return ReachabilityProbe.selectOne(dataSource, timeout);
    }

    @Override
    public OptionalLong currentVersion(TrackedObject object) {
        return OptionalLong.of(watermarkReader.read(object, watermarkQuery(object)));
    }

    @Override
    public List<Diagnostic> diagnose(TrackedObject object, OptionalLong storedVersion) {
        Names resolved = names(object);
        if (agedOut == null || resolved.quotedTable == null) {
            return List.of();
        }
        return agedOut.diagnose(object, resolved.quotedTable, storedVersion);
    }

    /**
     * Checks the database for the objects, as the login of the data source, and reports what would make their
     * cycles fail: Change Tracking on the database and each object's {@link TrackedObject#table(String) table},
     * the retention period, {@code ALLOW_SNAPSHOT_ISOLATION}, each procedure's existence and {@code @Json
     * NVARCHAR(MAX)} parameter, the login's EXECUTE and VIEW CHANGE TRACKING permissions, and, for incremental
     * objects, the starting watermark. Changes nothing.
     */
    public PreflightReport preflight(TrackedObject... objects) {
        return preflight(Arrays.asList(objects));
    }

    /** See {@link #preflight(TrackedObject...)}; pass {@code engine.trackedObjects()} to check an engine's. */
    public PreflightReport preflight(Collection<TrackedObject> objects) {
        List<PreflightRunner.Target> targets = objects.stream().map(o -> {
            Names resolved = names(o);
            return new PreflightRunner.Target(o, resolved.quotedProcedure, resolved.quotedTable, watermarkQuery(o));
        }).toList();
        return new PreflightRunner(dataSource, timeoutSeconds).run(targets);
    }

    /** The batch this provider sends for the object: {@code SET NOCOUNT ON; EXEC [schema].[name] @Json = ?}. */
    public String callSql(TrackedObject object) {
        return names(object).callSql;
    }

    /** The query that seeds the object's first incremental cycle. */
    public WatermarkQuery watermarkQuery(TrackedObject object) {
        return watermarks.getOrDefault(object.name(), defaultWatermark);
    }

    public Duration commandTimeout() {
        return Duration.ofSeconds(timeoutSeconds);
    }

    private Names names(TrackedObject object) {
        Names cached = names.get(object.name());
        if (cached != null && cached.matches(object)) {
            return cached;
        }
        Names resolved = Names.resolve(object);
        names.put(object.name(), resolved);
        return resolved;
    }

    /** An object's names, checked and quoted once. */
    private static final class Names {
        final String procedure;
        final String table;
        final String quotedProcedure;
        final String quotedTable;
        final String callSql;

        private Names(String procedure, String table, String quotedProcedure, String quotedTable) {
            this.procedure = procedure;
            this.table = table;
            this.quotedProcedure = quotedProcedure;
            this.quotedTable = quotedTable;
            this.callSql = ProcedureCall.sql(quotedProcedure);
        }

        static Names resolve(TrackedObject object) {
            String table = object.table().orElse(null);
            try {
                String procedure = SqlServerName.parse(object.procedure(), "procedure").quoted();
                String quotedTable = table == null ? null : SqlServerName.parse(table, "table").quoted();
                return new Names(object.procedure(), table, procedure, quotedTable);
            } catch (TidemarkException e) {
                throw TidemarkException.forObject(ErrorCode.INVALID_IDENTIFIER, object.name(), e.getMessage(), e);
            }
        }

        boolean matches(TrackedObject object) {
            return procedure.equals(object.procedure()) && Objects.equals(table, object.table().orElse(null));
        }
    }

    /** Configures a {@link SqlServerProvider}; validated as it goes and at {@link #build()}. */
    public static final class Builder {
        private final DataSource dataSource;
        private Duration commandTimeout = DEFAULT_COMMAND_TIMEOUT;
        private WatermarkQuery watermarkQuery = WatermarkQuery.changeTracking();
        private final List<Map.Entry<String, WatermarkQuery>> watermarkQueries = new ArrayList<>();
        private boolean agedOutCheck = true;

        private Builder(DataSource dataSource) {
            this.dataSource = dataSource;
        }

        /** How long one call may run before the driver cancels it; 300 seconds unless set. Whole seconds. */
        public Builder commandTimeout(Duration timeout) {
            this.commandTimeout = timeout;
            return this;
        }

        /** The watermark query for every object without its own; {@link WatermarkQuery#changeTracking()} unless set. */
        public Builder watermarkQuery(WatermarkQuery query) {
            this.watermarkQuery = query;
            return this;
        }

        /** The watermark query of one tracked object, by its name. */
        public Builder watermarkQuery(String objectName, WatermarkQuery query) {
            watermarkQueries.add(new AbstractMap.SimpleImmutableEntry<>(objectName, query));
            return this;
        }

        /**
         * Whether each cycle compares the watermark with {@code CHANGE_TRACKING_MIN_VALID_VERSION} of the object's
         * table (one small query per cycle, only for objects with a table); on unless set.
         */
        public Builder agedOutCheck(boolean enabled) {
            this.agedOutCheck = enabled;
            return this;
        }

        /** Checks every value at once (setters only store) and builds the provider. */
        public SqlServerProvider build() {
            Checks checks = Checks.of("SqlServerProvider");
            checks.notNull("dataSource", dataSource);
            checks.commandTimeout("commandTimeout", commandTimeout);
            checks.notNull("watermarkQuery", watermarkQuery);
            for (Map.Entry<String, WatermarkQuery> entry : watermarkQueries) {
                checks.that(entry.getKey() != null && !entry.getKey().isBlank(),
                        "watermarkQuery needs the name of a tracked object, got " + entry.getKey());
                checks.that(entry.getValue() != null, "watermarkQuery for " + entry.getKey() + " must not be null");
            }
            checks.throwIfAny();
            return new SqlServerProvider(this);
        }

        private Map<String, WatermarkQuery> queriesByObject() {
            Map<String, WatermarkQuery> byObject = new HashMap<>();
            watermarkQueries.forEach(e -> byObject.put(e.getKey(), e.getValue()));
            return byObject;
        }
    }
}
