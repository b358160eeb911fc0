package io.tidemark.postgres;

import io.tidemark.postgres.internal.FunctionCheck;
import io.tidemark.postgres.internal.PostgresErrors;
import io.tidemark.postgres.internal.horizon.HorizonHolder;
import io.tidemark.postgres.internal.horizon.HorizonWatch;
import io.tidemark.postgres.internal.horizon.ResponseHints;
import io.tidemark.postgres.internal.listen.NotificationListener;
import io.tidemark.postgres.internal.wake.ArmHint;
import io.tidemark.postgres.internal.wake.ArmedWakeUps;
import io.tidemark.sync.CheckReport;
import io.tidemark.sync.Diagnostic;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.CallContext;
import io.tidemark.sync.spi.ChangeProvider;
import io.tidemark.sync.internal.jdbc.ConnectionWatchdog;
import io.tidemark.sync.internal.jdbc.ReachabilityProbe;
import io.tidemark.sync.spi.ChangeRequest;
import io.tidemark.sync.internal.config.Checks;
import io.tidemark.sync.internal.config.Defaults;
import io.tidemark.sync.spi.ResponsePayload;
import io.tidemark.sync.internal.jdbc.Transactions;
import io.tidemark.sync.internal.sql.PgName;
import io.tidemark.sync.internal.sql.SqlTemplate;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * Calls PostgreSQL change functions: {@code SELECT <function>(?::json)}, the request bound as a parameter; wakes
 * objects when their changes are committed; and names the transaction that holds changes back.
 *
 * <p>The function must be a FUNCTION (a PROCEDURE cannot return a value) taking one {@code json} argument and
 * returning {@code json}, {@code jsonb} or {@code text}. Its name is checked and quoted before any SQL runs;
 * unquoted parts fold to lower case, as in PostgreSQL.
 *
 * <p>Each call takes a connection from the data source, runs in its own short transaction (committed at once
 * when the data source hands out connections with auto-commit off) and gives the connection back before the
 * response is delivered: no transaction stays open between cycles to hold the xmin horizon back.
 *
 * <p>PostgreSQL has no server-side equivalent of Change Tracking's current version, so an
 * {@link io.tidemark.sync.InitialSync#INCREMENTAL} object is seeded by calling the function with
 * {@code mode: "seed"}.
 *
 * <p><b>Wake-up.</b> While an engine runs, the provider LISTENs on one dedicated connection (channel
 * {@value PostgresOutbox#DEFAULT_CHANNEL} unless configured) and polls an object as soon as a notification names its
 * function, as {@link PostgresOutbox}'s capture does on commit; the poll interval stays the safety net. An outbox
 * notifies only while a reader waits: after a read that found nothing new, the provider arms its wake-up flag
 * before the engine waits, and reads again at a short interval until every writer that may have missed the flag
 * has ended (see provider-postgres/README.md, Wake-up). The
 * connection is held for as long as the engine runs (count it in a pool's size); {@code listen(false)} turns this
 * off.
 *
 * <p><b>Horizon diagnostics.</b> A change function may report {@code Metadata.Outbox.Horizon} and
 * {@code HeldBack} (the generated one does). When the same horizon has held committed changes back for
 * {@link Builder#horizonWarningAfter}, the provider looks the holding transaction up in {@code pg_stat_activity}
 * and reports it (pid, application, state, transaction age, query start) as a {@code HORIZON_HELD_BACK} diagnostic,
 * at most once per {@link Builder#horizonCheckInterval}; nothing is queried while the horizon moves on.
 */
public final class PostgresProvider implements ChangeProvider {

    /** What a change function may return. */
    private static final Set<String> RESULT_TYPES = Set.of("json", "jsonb", "text", "varchar");

    /** A listening connection silent for this long is checked with a round trip. */
    private static final Duration LISTEN_HEALTH_CHECK = Duration.ofSeconds(10);

    private final DataSource dataSource;
    private final int timeoutSeconds;
    private final boolean listen;
    private final String channel;
    private final Clock clock;
    private final HorizonWatch horizon;
    private final Map<String, String> callSql = new ConcurrentHashMap<>();
    /** The notification connections of running engines, told to reconnect at once when a probe gets through. */
    private final Set<NotificationListener> listeners = ConcurrentHashMap.newKeySet();
    /** The armed wake-ups of running engines: each read may arm its outbox's flag before the engine waits. */
    private final Set<ArmedWakeUps> wakeUps = ConcurrentHashMap.newKeySet();

    private PostgresProvider(Builder builder) {
        this.dataSource = builder.dataSource;
        this.timeoutSeconds = (int) builder.commandTimeout.toSeconds();
        this.listen = builder.listen;
        this.channel = builder.channel;
        this.clock = builder.clock;
        this.horizon = new HorizonWatch(builder.horizonWarningAfter, builder.horizonCheckInterval);
    }

    /** A provider with the default command timeout of 300 seconds. */
    public static PostgresProvider create(DataSource dataSource) {
        return builder(dataSource).build();
    }

    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    @Override
    public String name() {
        return "postgres";
    }

    @Override
    public void validate(TrackedObject object) {
        callSql(object);
    }

    /**
     * Connects once and looks each object's function up in {@code pg_proc}: it must exist where the call finds
     * it, take one {@code json} argument, return one {@code json}, {@code jsonb} or {@code text} value, and be
     * executable by the role. Every problem is reported; an unreachable database is {@code CONNECTION_FAILED}.
     */
    @Override
    public List<CheckReport.Problem> check(Collection<TrackedObject> objects) {
        return new FunctionCheck(dataSource, timeoutSeconds).run("provider " + name(), objects);
    }

    /**
     * {@code postgres:} and the function as it is called, quoted ({@code postgres:"public"."items_changes"});
     * stored with the object's watermark so that a re-pointed object does not continue from it. An unqualified
     * name stays unqualified (resolving the search_path would need a query on every cycle), so qualifying a
     * name later counts as a change of source: adopt the stored watermark then.
     */
    @Override
    public String sourceIdentity(TrackedObject object) {
        return name() + ":" + function(object).quoted();
    }

    private String callSql(TrackedObject object) {
        return callSql.computeIfAbsent(object.procedure(),
                procedure -> SqlTemplate.of("SELECT {{function}}(?::json)").with("function", function(object).quoted())
                        .render());
    }

    private static PgName function(TrackedObject object) {
        try {
            return PgName.parse(object.procedure(), "function");
        } catch (TidemarkException e) {
            throw TidemarkException.forObject(ErrorCode.INVALID_IDENTIFIER, object.name(), e.getMessage());
        }
    }

    @Override
    public ResponsePayload invoke(TrackedObject object, ChangeRequest request, CallContext context) {
        String sql = callSql(object);
        try (Connection connection = dataSource.getConnection()) {
            boolean ownTransaction = !connection.getAutoCommit();
            try {
                byte[] response = call(connection, sql, object, request, context);
                if (ownTransaction) {
                    connection.commit();
                }
                horizon.observe(object.name(), ResponseHints.read(response), clock.instant());
                if (!wakeUps.isEmpty()) {
                    Optional<ArmHint.Read> armHint = ArmHint.read(response);
                    wakeUps.forEach(w -> w.afterRead(connection, object, request.fromVersion(), armHint));
                }
                return ResponsePayload.ofUtf8(response == null ? new byte[0] : response);
            } catch (SQLException | RuntimeException e) {
                if (ownTransaction) {
                    Transactions.rollbackQuietly(connection, e);
                }
                throw e;
            }
        } catch (SQLException e) {
            throw PostgresErrors.map(e, dataSource, object, context, timeoutSeconds);
        }
    }

    @SuppressWarnings("try") // the registration is held for the call's duration, never read
    private byte[] call(Connection connection, String sql, TrackedObject object, ChangeRequest request,
                        CallContext context) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(sql);
             CallContext.Registration ignored = context.onCancel(() -> cancelQuietly(statement));
             ConnectionWatchdog.Guard watch = ConnectionWatchdog.watch(connection, Duration.ofSeconds(timeoutSeconds))) {
            statement.setQueryTimeout(timeoutSeconds);
            statement.setString(1, request.toJson());
            try (ResultSet rs = executeWatched(statement, watch, object)) {
                if (!rs.next()) {
                    return null;
                }
                String type = rs.getMetaData().getColumnTypeName(1);
                if (!RESULT_TYPES.contains(type)) {
                    throw TidemarkException.forObject(ErrorCode.PROCEDURE_SIGNATURE, object.name(),
                            "function " + object.procedure() + " returns " + type
                                    + "; a change function must return json, jsonb or text");
                }
                // The driver already holds the value as UTF-8 bytes: hand those over, no String copy.
                byte[] value = rs.getBytes(1);
                if (rs.next()) {
                    throw TidemarkException.forObject(ErrorCode.PROCEDURE_SIGNATURE, object.name(),
                            "function " + object.procedure() + " returned more than one row; a change function"
                                    + " returns one JSON document (RETURNS json, not SETOF json)");
                }
                return value;
            }
        }
    }

    /**
     * Runs the call; when the watchdog had to abandon the connection (the server did not answer, not even the
     * statement timeout's cancel), says so: it is a connection that died, not a slow function.
     */
    private ResultSet executeWatched(PreparedStatement statement, ConnectionWatchdog.Guard watch,
                                     TrackedObject object) throws SQLException {
        try {
            return statement.executeQuery();
        } catch (SQLException e) {
            if (watch.fired()) {
                throw TidemarkException.forObject(ErrorCode.CONNECTION_FAILED, object.name(), "the database stopped"
                        + " answering: the call to " + object.procedure() + " got no reply within the command"
                        + " timeout of " + timeoutSeconds + " s plus " + ConnectionWatchdog.GRACE.toSeconds()
                        + " s (not even to its cancel), so the connection was abandoned. A network partition, a"
                        + " failover or a half-open connection does this; the engine retries as soon as the database"
                        + " answers. Setting the driver's socketTimeout and tcpKeepAlive bounds such waits too.", e);
            }
            throw e;
        }
    }

    @Override
    public OptionalLong currentVersion(TrackedObject object) {
        return OptionalLong.empty();
    }

    /** A {@code HORIZON_HELD_BACK} warning when an old transaction holds this object's changes back. */
    @Override
    public List<Diagnostic> diagnose(TrackedObject object, OptionalLong storedVersion) {
        return horizon.diagnose(object.name(), clock.instant(),
                (h, heldSince) -> HorizonHolder.describe(dataSource, h, heldSince));
    }

    /** {@code SELECT 1} on a connection from the data source: whether the database answers now. */
    @Override
    public Reachability probe(Duration timeout) {
        Reachability reachability = ReachabilityProbe.selectOne(dataSource, timeout);
        if (reachability == Reachability.REACHABLE) {
            // A notification connection still waiting to reconnect would leave commits made from now on unnoticed
            // until its next attempt: it reconnects now.
            listeners.forEach(NotificationListener::retryNow);
        }
        return reachability;
    }

    /** LISTENs for the objects' functions on a dedicated connection, unless {@code listen(false)}. */
    @Override
    public AutoCloseable subscribe(Collection<TrackedObject> objects, Consumer<String> wakeUp) {
        if (!listen || objects.isEmpty()) {
            return () -> { };
        }
        ArmedWakeUps armed = new ArmedWakeUps(objects, wakeUp, timeoutSeconds);
        wakeUps.add(armed);
        NotificationListener listener = NotificationListener.start(dataSource, channel, LISTEN_HEALTH_CHECK, objects,
                armed::notified);
        listeners.add(listener);
        return () -> {
            listeners.remove(listener);
            wakeUps.remove(armed);
            listener.close();
            armed.close();
        };
    }

    private static void cancelQuietly(PreparedStatement statement) {
        try {
            statement.cancel();
        } catch (SQLException ignored) {
            // The statement has finished or the connection is gone: nothing is left to cancel.
        }
    }


    /**
     * Configures a {@link PostgresProvider}. Setters only store; {@link #build()} checks every value at once and
     * reports all problems in one {@code INVALID_CONFIGURATION} error.
     */
    public static final class Builder {
        private final DataSource dataSource;
        private Duration commandTimeout = Defaults.COMMAND_TIMEOUT;
        private boolean listen = true;
        private String channel = PostgresOutbox.DEFAULT_CHANNEL;
        private Duration horizonWarningAfter = Duration.ofMinutes(1);
        private Duration horizonCheckInterval = Duration.ofSeconds(30);
        private Clock clock = Clock.systemUTC();

        private Builder(DataSource dataSource) {
            this.dataSource = dataSource;
        }

        /** How long one call may run before it is cancelled; 300 seconds unless set. Whole seconds. */
        public Builder commandTimeout(Duration timeout) {
            this.commandTimeout = timeout;
            return this;
        }

        /** Whether a running engine LISTENs for notifications on a dedicated connection; default true. */
        public Builder listen(boolean enabled) {
            this.listen = enabled;
            return this;
        }

        /** The channel to LISTEN on; default {@value PostgresOutbox#DEFAULT_CHANNEL}, as the outbox notifies. */
        public Builder channel(String channel) {
            this.channel = channel;
            return this;
        }

        /**
         * How long one transaction must have held committed changes back before it is looked up and reported;
         * default one minute. Zero reports at the first poll that sees changes held back.
         */
        public Builder horizonWarningAfter(Duration threshold) {
            this.horizonWarningAfter = threshold;
            return this;
        }

        /** The least time between two {@code pg_stat_activity} look-ups for one object; default 30 seconds. */
        public Builder horizonCheckInterval(Duration interval) {
            this.horizonCheckInterval = interval;
            return this;
        }

        /** The clock the horizon diagnostics measure time with; the system UTC clock unless set. */
        public Builder clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        public PostgresProvider build() {
            Checks checks = Checks.of("PostgresProvider");
            checks.notNull("dataSource", dataSource);
            checks.commandTimeout("commandTimeout", commandTimeout);
            if (checks.notNull("channel", channel)) {
                checks.valid(() -> PgName.checkPart(channel, "notification channel"));
            }
            checks.notNegative("horizonWarningAfter", horizonWarningAfter);
            checks.notNegative("horizonCheckInterval", horizonCheckInterval);
            checks.notNull("clock", clock);
            checks.throwIfAny();
            return new PostgresProvider(this);
        }
    }
}
