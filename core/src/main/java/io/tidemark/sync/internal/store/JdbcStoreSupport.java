package io.tidemark.sync.internal.store;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.CheckReport;
import io.tidemark.sync.internal.config.Checks;
import io.tidemark.sync.internal.coordination.Fences;
import io.tidemark.sync.internal.coordination.HeldLease;
import io.tidemark.sync.internal.jdbc.ConnectionLoss;
import io.tidemark.sync.internal.jdbc.ConnectionWatchdog;
import io.tidemark.sync.internal.jdbc.JdbcTarget;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.HandleListener;
import org.jdbi.v3.core.Handles;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.JdbiException;
import org.jdbi.v3.core.statement.SqlStatements;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/** What the JDBC stores share: the dialect, the JDBI handle factory, table creation and error wrapping. */
public final class JdbcStoreSupport {

    public static final String DEFAULT_SCHEMA = "tidemark";
    public static final String DEFAULT_STATE_TABLE = "sync_state";
    public static final String DEFAULT_DEAD_LETTER_TABLE = "dead_letters";
    /**
     * How long one store statement may run (JDBC query timeout); a connection that has not answered by then plus
     * {@link ConnectionWatchdog#GRACE} is abandoned. Store statements touch one row: this is only ever reached when
     * the database or the network stopped answering, or a lock is held for that long.
     */
    public static final Duration STATEMENT_TIMEOUT = Duration.ofSeconds(10);

    private final Jdbi jdbi;
    private final StoreDialect dialect;
    private final DataSource dataSource;
    private final String schema;
    private final boolean createTables;
    private String databaseIdentity;

    /**
     * Validates the configuration (every problem at once, named after {@code builder}), connects once to detect
     * the database, and creates or upgrades missing tables when asked to.
     */
    public JdbcStoreSupport(String builder, DataSource dataSource, String schema, String stateTable,
                            String deadLetterTable, boolean createTables) {
        Checks checks = Checks.of(builder);
        checks.notNull("dataSource", dataSource);
        checks.notNull("schema", schema);
        checks.notNull("table", stateTable);
        checks.notNull("deadLetterTable", deadLetterTable);
        checks.throwIfAny();
        this.dataSource = dataSource;
        this.schema = schema;
        this.createTables = createTables;
        this.dialect = StoreDialect.detect(builder, dataSource, schema, stateTable, deadLetterTable);
        this.jdbi = Jdbi.create(dataSource);
        jdbi.getConfig(SqlStatements.class).setQueryTimeout((int) STATEMENT_TIMEOUT.toSeconds());
        jdbi.getConfig(Handles.class).addListener(new WatchedHandles());
        if (createTables) {
            try (Connection c = dataSource.getConnection()) {
                dialect.createIfMissing(c);
            } catch (SQLException e) {
                throw new TidemarkException(ErrorCode.STORE_FAILED, "Could not create or upgrade the Tidemark store"
                        + " tables in schema '" + schema + "': " + e.getMessage() + ". Create or upgrade them with"
                        + " the script from script() and build the store with createTables(false).", e);
            }
        }
    }

    /** Watches every handle's connection while it is open, so a store operation never waits on a dead one for long. */
    private static final class WatchedHandles implements HandleListener {
        private final Map<Handle, ConnectionWatchdog.Guard> guards = new ConcurrentHashMap<>();

        @Override
        public void handleCreated(Handle handle) {
            guards.put(handle, ConnectionWatchdog.watch(handle.getConnection(), STATEMENT_TIMEOUT));
        }

        @Override
        public void handleClosed(Handle handle) {
            ConnectionWatchdog.Guard guard = guards.remove(handle);
            if (guard != null) {
                guard.close();
            }
        }
    }

    /**
     * Which database this store's connections reach ({@link StoreDialect#databaseIdentity()}), read once: for the
     * build-time check that a coordinated engine's stores share one database.
     */
    public synchronized String databaseIdentity() {
        if (databaseIdentity == null) {
            try {
                databaseIdentity = jdbi.withHandle(h -> h.createQuery(dialect.databaseIdentity())
                        .mapTo(String.class).one());
            } catch (JdbiException e) {
                throw failure("identify the store's database", "*", e);
            }
        }
        return databaseIdentity;
    }

    /**
     * For an engine with coordination: creates the lease tables if the store creates its tables (else the store's
     * {@code script()} has them for a DBA to run).
     */
    public void prepareLeaseTables() {
        if (!createTables) {
            return;
        }
        try (Connection c = dataSource.getConnection()) {
            dialect.createLeaseTablesIfMissing(c);
        } catch (SQLException e) {
            throw new TidemarkException(ErrorCode.STORE_FAILED, "Could not create or upgrade the lease tables "
                    + dialect.leases().leaseTable() + " and " + dialect.leases().instanceTable() + ": "
                    + e.getMessage() + ". Create or upgrade them with the script from script() and build the store"
                    + " with createTables(false).", e);
        }
    }

    public Jdbi jdbi() {
        return jdbi;
    }

    public StoreDialect dialect() {
        return dialect;
    }

    /**
     * The fence of a write on {@code objectName}, run first in the write's transaction: when the current thread's
     * cycle runs under a lease (coordination), the write goes ahead only if that lease is still held at its epoch
     * on the database's clock; otherwise the transaction fails with {@code LEASE_LOST} and changes nothing. The
     * check takes no lock (a holder frozen in the middle of a write must not hold up the takeover): a write that
     * passed it just before the lease ran out can still commit, and the compare-and-set of the version writes is
     * what keeps the new holder's writes from being overtaken by it. Without a lease it runs no SQL.
     */
    public void fence(Handle h, String objectName) {
        Optional<HeldLease> lease = Fences.current(objectName);
        if (lease.isEmpty()) {
            return;
        }
        int held = h.createQuery(dialect.leases().fence())
                .bind("name", objectName)
                .bind("holder", lease.get().holder())
                .bind("epoch", lease.get().epoch())
                .mapTo(Integer.class)
                .one();
        if (held != 1) {
            lease.get().markLost();
            throw Fences.lost(lease.get(), "the store refused its write, which changed nothing");
        }
    }

    /** Whether a write on {@code objectName} from this thread is fenced, and so needs a transaction of its own. */
    public boolean fenced(String objectName) {
        return Fences.current(objectName).isPresent();
    }

    /**
     * The start-up check of one store: connects, and runs {@code probe} (a read of the store's table with one
     * {@code :name} parameter) for a name no object has. Returns the problems found.
     */
    public List<CheckReport.Problem> check(String component, String probe) {
        try (Connection c = dataSource.getConnection()) {
            try (Handle h = Jdbi.open(c)) {
                h.createQuery(probe).bind("name", "").mapToMap().list();
            } catch (JdbiException e) {
                return List.of(new CheckReport.Problem(component, ErrorCode.STORE_FAILED, "the store's table in"
                        + " schema '" + schema + "' cannot be read: " + rootMessage(e) + ". Create it with the"
                        + " script from script(), or grant the role SELECT, INSERT and UPDATE on it."));
            }
        } catch (SQLException e) {
            return List.of(new CheckReport.Problem(component, ErrorCode.CONNECTION_FAILED,
                    "could not connect to the store's database: " + withoutFullStop(e.getMessage())
                            + ". Check the data source's URL, the credentials and the network."));
        }
        return List.of();
    }

    /**
     * Wraps a database failure of a store operation in a {@link TidemarkException} naming the object: an
     * unreachable database is {@code CONNECTION_FAILED} with the driver's own description (which names the host
     * and port), anything else {@code STORE_FAILED}.
     */
    public TidemarkException failure(String what, String objectName, JdbiException e) {
        return failure(what, objectName, e, JdbcTarget.describe(dataSource));
    }

    /** As {@link #failure(String, String, JdbiException)}, naming the store's database by {@code target} if known. */
    public static TidemarkException failure(String what, String objectName, JdbiException e, String target) {
        if (ConnectionLoss.isConnectionLoss(e)) {
            return TidemarkException.forObject(ErrorCode.CONNECTION_FAILED, objectName, "could not " + what
                    + " in the Tidemark store: its database" + (target == null ? "" : " (" + target + ")")
                    + " could not be reached: "
                    + withoutFullStop(ConnectionLoss.describe(e)) + ". Check the data source's URL, the credentials"
                    + " and the network; the engine retries as soon as the database answers.", e);
        }
        return TidemarkException.forObject(ErrorCode.STORE_FAILED, objectName,
                "could not " + what + " in the Tidemark store: " + rootMessage(e), e);
    }

    static String withoutFullStop(String message) {
        return message != null && message.endsWith(".") ? message.substring(0, message.length() - 1) : message;
    }

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t.getMessage();
    }
}
