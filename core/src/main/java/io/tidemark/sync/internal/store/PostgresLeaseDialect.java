package io.tidemark.sync.internal.store;

import io.tidemark.sync.internal.jdbc.Jdbc;
import io.tidemark.sync.internal.sql.SqlTemplate;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The lease tables on PostgreSQL. {@code clock_timestamp()} rather than {@code now()}: {@code now()} is the start
 * of the transaction, and the fence runs inside a write's transaction.
 */
final class PostgresLeaseDialect extends LeaseDialect {

    PostgresLeaseDialect(String leases, String instances) {
        super(leases, instances);
    }

    @Override
    protected String now() {
        return "clock_timestamp()";
    }

    @Override
    protected String expiry() {
        return "clock_timestamp() + :ms * interval '1 millisecond'";
    }

    @Override
    public String script() {
        return SqlTemplate.of("""
                -- Leases, for engines on several instances (used only when coordination is configured):
                -- one row per tracked object, held by one instance until expires_at (the database's clock);
                -- epoch goes up each time the lease changes hands, and fences every write of its holder.
                {{create_leases}};

                -- One heartbeat per live engine instance: each takes its fair share of the objects.
                {{create_instances}};
                """)
                .with("create_leases", createLeases())
                .with("create_instances", createInstances())
                .render();
    }

    private String createLeases() {
        return SqlTemplate.of("""
                CREATE TABLE IF NOT EXISTS {{leases}} (
                    object_name text        PRIMARY KEY,
                    holder      text        NOT NULL,   -- the instance id of the holder
                    epoch       bigint      NOT NULL,   -- raised by every acquisition: the fencing token
                    acquired_at timestamptz NOT NULL,
                    expires_at  timestamptz NOT NULL,   -- free once passed; a clean close sets it to now
                    in_flight   text                    -- the page its holder is delivering (JSON), see recordInFlight
                )""").with("leases", leases).render();
    }

    /** Adds {@code column} to {@code table} (both created before the column existed). */
    private static String addColumn(String table, String column) {
        return SqlTemplate.of("""
                ALTER TABLE {{table}} ADD COLUMN IF NOT EXISTS {{column}} text""")
                .with("table", table).with("column", column).render();
    }

    private String createInstances() {
        return SqlTemplate.of("""
                CREATE TABLE IF NOT EXISTS {{instances}} (
                    instance_id text        PRIMARY KEY,
                    object_set  text        NOT NULL,   -- hash of the tracked objects' names: equal sets share
                    started_at  timestamptz NOT NULL,
                    last_seen   timestamptz NOT NULL,
                    expires_at  timestamptz NOT NULL,   -- counted as live until then
                    destinations text                   -- its destinations' names (JSON): their positions hold
                )""").with("instances", instances).render();
    }

    @Override
    void createIfMissing(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            if (!Jdbc.queryBoolean(c, "SELECT to_regclass(?) IS NOT NULL", leases)) {
                s.execute(createLeases());
            } else if (!hasColumn(c, leases, "in_flight")) {
                // Lease tables created before pages in flight were recorded.
                s.execute(addColumn(leases, "in_flight"));
            }
            if (!Jdbc.queryBoolean(c, "SELECT to_regclass(?) IS NOT NULL", instances)) {
                s.execute(createInstances());
            } else if (!hasColumn(c, instances, "destinations")) {
                // Heartbeat tables created before instances published their destinations.
                s.execute(addColumn(instances, "destinations"));
            }
        }
    }

    /**
     * Checked first: ALTER TABLE takes an ACCESS EXCLUSIVE lock (stalling the other instances' renewals and fenced
     * writes) and needs ownership of the table, which an application role using tables a DBA created lacks, even
     * with IF NOT EXISTS.
     */
    private static boolean hasColumn(Connection c, String table, String column) throws SQLException {
        return Jdbc.queryBoolean(c, """
                SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute
                                WHERE attrelid = to_regclass(?) AND attname = ? AND NOT attisdropped)""",
                table, column);
    }

    @Override
    public String acquire() {
        return SqlTemplate.of("""
                -- Takes a free lease: no row yet, or an expired one. A concurrent taker waits on the row
                -- lock, then finds it unexpired and takes nothing.
                INSERT INTO {{leases}} AS l (object_name, holder, epoch, acquired_at, expires_at)
                VALUES (:name, :holder, 1, clock_timestamp(), {{expiry}})
                ON CONFLICT (object_name) DO UPDATE
                   SET holder = EXCLUDED.holder,
                       epoch = l.epoch + 1,
                       acquired_at = EXCLUDED.acquired_at,
                       expires_at = EXCLUDED.expires_at
                 WHERE l.expires_at <= clock_timestamp()
                RETURNING epoch""").with("leases", leases).with("expiry", expiry()).render();
    }

    @Override
    public String heartbeat() {
        return SqlTemplate.of("""
                INSERT INTO {{instances}} AS i (instance_id, object_set, started_at, last_seen, expires_at,
                                                destinations)
                VALUES (:instance, :object_set, clock_timestamp(), clock_timestamp(), {{expiry}}, :destinations)
                ON CONFLICT (instance_id) DO UPDATE
                   SET object_set = EXCLUDED.object_set,
                       destinations = EXCLUDED.destinations,
                       last_seen = EXCLUDED.last_seen,
                       expires_at = EXCLUDED.expires_at""")
                .with("instances", instances).with("expiry", expiry()).render();
    }
}
