package io.tidemark.sync.internal.store;

import io.tidemark.sync.internal.sql.SqlServerName;
import io.tidemark.sync.internal.sql.SqlTemplate;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The lease tables on SQL Server. Times are {@code SYSUTCDATETIME()} (the server's clock in UTC, so a change of the
 * server's time zone or daylight saving moves no expiry); a lease is taken with {@code MERGE ... WITH (HOLDLOCK)}
 * so two instances finding the same free lease cannot both take it.
 */
final class SqlServerLeaseDialect extends LeaseDialect {

    private static final String NAME_TYPE = "NVARCHAR(200) COLLATE Latin1_General_100_BIN2";

    SqlServerLeaseDialect(String leases, String instances) {
        super(leases, instances);
    }

    @Override
    protected String now() {
        return "SYSUTCDATETIME()";
    }

    @Override
    protected String expiry() {
        return "DATEADD(millisecond, :ms, SYSUTCDATETIME())";
    }

    @Override
    public String script() {
        return SqlTemplate.of("""
                -- Leases, for engines on several instances (used only when coordination is configured):
                -- one row per tracked object, held by one instance until expires_at (the server's UTC clock);
                -- epoch goes up each time the lease changes hands, and fences every write of its holder.
                IF OBJECT_ID({{leases_literal}}, N'U') IS NULL
                {{create_leases}};
                GO

                -- One heartbeat per live engine instance: each takes its fair share of the objects.
                IF OBJECT_ID({{instances_literal}}, N'U') IS NULL
                {{create_instances}};
                GO
                """)
                .with("leases_literal", SqlServerName.literal(leases))
                .with("create_leases", createLeases())
                .with("instances_literal", SqlServerName.literal(instances))
                .with("create_instances", createInstances())
                .render();
    }

    private String createLeases() {
        return SqlTemplate.of("""
                CREATE TABLE {{leases}} (
                    object_name {{name_type}} NOT NULL PRIMARY KEY,
                    holder      {{name_type}} NOT NULL,   -- the instance id of the holder
                    epoch       BIGINT        NOT NULL,   -- raised by every acquisition: the fencing token
                    acquired_at DATETIME2     NOT NULL,   -- UTC
                    expires_at  DATETIME2     NOT NULL,   -- UTC; free once passed, a clean close sets it to now
                    in_flight   NVARCHAR(MAX) NULL        -- the page its holder is delivering (JSON), see recordInFlight
                )""").with("leases", leases).with("name_type", NAME_TYPE).render();
    }

    private String createInstances() {
        return SqlTemplate.of("""
                CREATE TABLE {{instances}} (
                    instance_id {{name_type}} NOT NULL PRIMARY KEY,
                    object_set  {{name_type}} NOT NULL,   -- hash of the tracked objects' names: equal sets share
                    started_at  DATETIME2     NOT NULL,   -- UTC
                    last_seen   DATETIME2     NOT NULL,   -- UTC
                    expires_at  DATETIME2     NOT NULL,   -- UTC; counted as live until then
                    destinations NVARCHAR(MAX) NULL       -- its destinations' names (JSON): their positions hold
                )""").with("instances", instances).with("name_type", NAME_TYPE).render();
    }

    @Override
    void createIfMissing(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            if (missing(c, leases)) {
                s.execute(createLeases());
            } else if (missingColumn(c, leases, "in_flight")) {
                // Lease tables created before pages in flight were recorded.
                s.execute(SqlTemplate.of("ALTER TABLE {{leases}} ADD in_flight NVARCHAR(MAX) NULL")
                        .with("leases", leases).render());
            }
            if (missing(c, instances)) {
                s.execute(createInstances());
            } else if (missingColumn(c, instances, "destinations")) {
                // Heartbeat tables created before instances published their destinations.
                s.execute(SqlTemplate.of("ALTER TABLE {{instances}} ADD destinations NVARCHAR(MAX) NULL")
                        .with("instances", instances).render());
            }
        }
    }

    private static boolean missingColumn(Connection c, String table, String column) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT COL_LENGTH(?, ?)")) {
            ps.setNString(1, table);
            ps.setNString(2, column);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                rs.getObject(1);
                return rs.wasNull();
            }
        }
    }

    private static boolean missing(Connection c, String table) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT OBJECT_ID(?, N'U')")) {
            ps.setNString(1, table);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                rs.getObject(1);
                return rs.wasNull();
            }
        }
    }

    @Override
    public String acquire() {
        return SqlTemplate.of("""
                -- Takes a free lease: no row yet, or an expired one. HOLDLOCK makes a concurrent taker wait,
                -- then find the lease unexpired and take nothing.
                MERGE {{leases}} WITH (HOLDLOCK) AS l
                USING (SELECT :name AS object_name) AS src ON l.object_name = src.object_name
                 WHEN MATCHED AND l.expires_at <= SYSUTCDATETIME() THEN UPDATE
                      SET holder = :holder,
                          epoch = l.epoch + 1,
                          acquired_at = SYSUTCDATETIME(),
                          expires_at = {{expiry}}
                 WHEN NOT MATCHED THEN INSERT (object_name, holder, epoch, acquired_at, expires_at)
                      VALUES (:name, :holder, 1, SYSUTCDATETIME(), {{expiry}})
                OUTPUT inserted.epoch;""").with("leases", leases).with("expiry", expiry()).render();
    }

    @Override
    public String heartbeat() {
        return SqlTemplate.of("""
                MERGE {{instances}} WITH (HOLDLOCK) AS i
                USING (SELECT :instance AS instance_id) AS src ON i.instance_id = src.instance_id
                 WHEN MATCHED THEN UPDATE
                      SET object_set = :object_set,
                          destinations = :destinations,
                          last_seen = SYSUTCDATETIME(),
                          expires_at = {{expiry}}
                 WHEN NOT MATCHED THEN INSERT (instance_id, object_set, started_at, last_seen, expires_at,
                                               destinations)
                      VALUES (:instance, :object_set, SYSUTCDATETIME(), SYSUTCDATETIME(), {{expiry}},
                              :destinations);""")
                .with("instances", instances).with("expiry", expiry()).render();
    }
}
