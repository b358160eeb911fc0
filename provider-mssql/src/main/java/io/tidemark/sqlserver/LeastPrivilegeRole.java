package io.tidemark.sqlserver;

import io.tidemark.sqlserver.internal.TSqlScript;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.internal.sql.SqlServerName;

import javax.sql.DataSource;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Generates a database role with exactly what Tidemark's login needs, as a script to review and run
 * ({@link #script()}) or to install directly ({@link #install(DataSource)}):
 * <ul>
 *   <li>{@code EXECUTE} on each change procedure;</li>
 *   <li>{@code VIEW CHANGE TRACKING} on each table the procedures read. {@code CHANGETABLE} checks this permission
 *       itself, even inside a procedure: ownership chaining covers the procedure's {@code SELECT}s (procedure
 *       and table have the same owner), not this;</li>
 *   <li>optionally, read and write access to the schema of Tidemark's watermark and dead-letter tables, created
 *       beforehand from {@code JdbcWatermarkStore.script()} (the stores then run with {@code createTables(false)}).</li>
 * </ul>
 * No {@code SELECT} on the tables, no {@code VIEW DATABASE STATE}, no DDL.
 *
 * <pre>{@code
 * String sql = LeastPrivilegeRole.named("tidemark_reader")
 *         .grantsFor(itemsProcedure)       // a ChangeProcedureGenerator: its procedure and table
 *         .storeSchema("tidemark")
 *         .member("tidemark_app")
 *         .build()
 *         .script();
 * }</pre>
 */
public final class LeastPrivilegeRole {

    private final String role;
    private final List<SqlServerName> procedures;
    private final List<SqlServerName> tables;
    private final String storeSchema;
    private final List<String> members;

    private LeastPrivilegeRole(Builder b) {
        this.role = b.role;
        this.procedures = List.copyOf(b.procedures);
        this.tables = List.copyOf(b.tables);
        this.storeSchema = b.storeSchema;
        this.members = List.copyOf(b.members);
    }

    /** Starts a role; the name is a plain database role name such as {@code tidemark_reader}. */
    public static Builder named(String role) {
        return new Builder(role);
    }

    /** The script: the role (created when missing), its grants, its members. Safe to run again. */
    public String script() {
        String quoted = SqlServerName.quote(role);
        StringBuilder sb = new StringBuilder(2048);
        sb.append(TSqlScript.banner(
                "Tidemark least-privilege role " + quoted,
                "",
                "What Tidemark's login needs and nothing more: to run the change procedures, and to read the",
                "Change Tracking data of the tables they read. The procedures' own SELECTs reach the tables",
                "through ownership chaining (procedure and table have the same owner), so the role gets no",
                "SELECT on the tables. Run it as a user allowed to create roles and grant these permissions."));
        sb.append('\n')
                .append("IF DATABASE_PRINCIPAL_ID(").append(SqlServerName.literal(role)).append(") IS NULL\n")
                .append("    CREATE ROLE ").append(quoted).append(";\n")
                .append(TSqlScript.GO).append("\n\n");
        if (!procedures.isEmpty()) {
            sb.append("-- Run the change procedures.\n");
            for (SqlServerName procedure : procedures) {
                sb.append("GRANT EXECUTE ON OBJECT::").append(procedure.quoted()).append(" TO ").append(quoted)
                        .append(";\n");
            }
            sb.append('\n');
        }
        if (!tables.isEmpty()) {
            sb.append("-- Read the Change Tracking data of the tables: CHANGETABLE and CHANGE_TRACKING_MIN_VALID_VERSION\n")
                    .append("-- check VIEW CHANGE TRACKING themselves, inside a procedure too.\n");
            for (SqlServerName table : tables) {
                sb.append("GRANT VIEW CHANGE TRACKING ON OBJECT::").append(table.quoted()).append(" TO ")
                        .append(quoted).append(";\n");
            }
            sb.append('\n');
        }
        if (storeSchema != null) {
            sb.append("-- Tidemark's watermark and dead-letter tables, created beforehand from JdbcWatermarkStore.script().\n")
                    .append("GRANT SELECT, INSERT, UPDATE, DELETE ON SCHEMA::").append(SqlServerName.quote(storeSchema))
                    .append(" TO ").append(quoted).append(";\n\n");
        }
        if (!procedures.isEmpty() || !tables.isEmpty() || storeSchema != null) {
            sb.setLength(sb.length() - 1);
            sb.append(TSqlScript.GO).append("\n\n");
        }
        for (String member : members) {
            sb.append("-- Member: the database user Tidemark connects as (it must exist).\n")
                    .append("IF ISNULL(IS_ROLEMEMBER(").append(SqlServerName.literal(role)).append(", ")
                    .append(SqlServerName.literal(member)).append("), 0) = 0\n")
                    .append("    ALTER ROLE ").append(quoted).append(" ADD MEMBER ").append(SqlServerName.quote(member))
                    .append(";\n")
                    .append(TSqlScript.GO).append("\n\n");
        }
        return sb.toString();
    }

    /** Runs the script, batch by batch. */
    public void install(DataSource dataSource) {
        TSqlScript.run(dataSource, script(), "role " + SqlServerName.quote(role));
    }

    public String role() {
        return role;
    }

    /** Configures a {@link LeastPrivilegeRole}. */
    public static final class Builder {
        private final String role;
        private final Set<SqlServerName> procedures = new LinkedHashSet<>();
        private final Set<SqlServerName> tables = new LinkedHashSet<>();
        private String storeSchema;
        private final Set<String> members = new LinkedHashSet<>();

        private Builder(String role) {
            this.role = SqlServerName.checkPart(role, "role");
        }

        /** EXECUTE on a change procedure ({@code schema.name}; schema {@code dbo} when none is given). */
        public Builder procedure(String procedure) {
            procedures.add(SqlServerName.parse(procedure, "procedure").withDefaultSchema("dbo"));
            return this;
        }

        /** VIEW CHANGE TRACKING on a table a change procedure reads. */
        public Builder table(String table) {
            tables.add(SqlServerName.parse(table, "table").withDefaultSchema("dbo"));
            return this;
        }

        /** The procedure and the table of a generated change procedure. */
        public Builder grantsFor(ChangeProcedureGenerator generated) {
            return procedure(generated.procedureName()).table(generated.tableName());
        }

        /** Read and write access to the schema of Tidemark's store tables ({@code tidemark} by default there). */
        public Builder storeSchema(String schema) {
            this.storeSchema = SqlServerName.checkPart(schema, "schema");
            return this;
        }

        /** A database user to add to the role. */
        public Builder member(String user) {
            members.add(SqlServerName.checkPart(user, "user"));
            return this;
        }

        public LeastPrivilegeRole build() {
            if (procedures.isEmpty() && tables.isEmpty() && storeSchema == null) {
                throw new TidemarkException(ErrorCode.INVALID_CONFIGURATION, "LeastPrivilegeRole "
                        + SqlServerName.quote(role) + " grants nothing: add procedure(...), table(...) or grantsFor(...)");
            }
            return new LeastPrivilegeRole(this);
        }
    }
}
