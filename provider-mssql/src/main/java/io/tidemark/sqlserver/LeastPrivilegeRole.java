package io.tidemark.sqlserver;

import io.tidemark.sqlserver.internal.TSqlScript;
import io.tidemark.sync.internal.config.Checks;
import io.tidemark.sync.internal.sql.SqlServerName;
import io.tidemark.sync.internal.sql.SqlTemplate;

import javax.sql.DataSource;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

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
        String banner = TSqlScript.banner(
                "Tidemark least-privilege role " + quoted,
                "",
                "What Tidemark's login needs and nothing more: to run the change procedures, and to read the",
                "Change Tracking data of the tables they read. The procedures' own SELECTs reach the tables",
                "through ownership chaining (procedure and table have the same owner), so the role gets no",
                "SELECT on the tables. Run it as a user allowed to create roles and grant these permissions.");
        return SqlTemplate.of("""
                {{banner}}
                IF DATABASE_PRINCIPAL_ID({{role_literal}}) IS NULL
                    CREATE ROLE {{role}};
                GO

                {{grants}}{{members}}""")
                .with("banner", banner)
                .with("role_literal", SqlServerName.literal(role))
                .with("role", quoted)
                .with("grants", grants(quoted))
                .with("members", members.stream().map(member -> member(quoted, member)).collect(Collectors.joining()))
                .render();
    }

    /** The grants, one commented block per kind, in one batch; nothing when there are none. */
    private String grants(String quoted) {
        List<String> blocks = new ArrayList<>();
        if (!procedures.isEmpty()) {
            blocks.add("-- Run the change procedures.\n" + procedures.stream()
                    .map(procedure -> "GRANT EXECUTE ON OBJECT::" + procedure.quoted() + " TO " + quoted + ";\n")
                    .collect(Collectors.joining()));
        }
        if (!tables.isEmpty()) {
            blocks.add("""
                    -- Read the Change Tracking data of the tables: CHANGETABLE and CHANGE_TRACKING_MIN_VALID_VERSION
                    -- check VIEW CHANGE TRACKING themselves, inside a procedure too.
                    """ + tables.stream()
                    .map(table -> "GRANT VIEW CHANGE TRACKING ON OBJECT::" + table.quoted() + " TO " + quoted + ";\n")
                    .collect(Collectors.joining()));
        }
        if (storeSchema != null) {
            blocks.add(SqlTemplate.of("""
                    -- Tidemark's watermark and dead-letter tables, created beforehand from JdbcWatermarkStore.script().
                    GRANT SELECT, INSERT, UPDATE, DELETE ON SCHEMA::{{schema}} TO {{role}};
                    """).with("schema", SqlServerName.quote(storeSchema)).with("role", quoted).render());
        }
        return blocks.isEmpty() ? "" : String.join("\n", blocks) + "GO\n\n";
    }

    private String member(String quoted, String member) {
        return SqlTemplate.of("""
                -- Member: the database user Tidemark connects as (it must exist).
                IF ISNULL(IS_ROLEMEMBER({{role_literal}}, {{member_literal}}), 0) = 0
                    ALTER ROLE {{role}} ADD MEMBER {{member}};
                GO

                """)
                .with("role_literal", SqlServerName.literal(role))
                .with("member_literal", SqlServerName.literal(member))
                .with("role", quoted)
                .with("member", SqlServerName.quote(member))
                .render();
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
        private final String roleName;
        private final List<String> procedureNames = new ArrayList<>();
        private final List<String> tableNames = new ArrayList<>();
        private String storeSchemaName;
        private final List<String> memberNames = new ArrayList<>();
        /** Filled by {@link #build()} from the names above, checked. */
        private String role;
        private final Set<SqlServerName> procedures = new LinkedHashSet<>();
        private final Set<SqlServerName> tables = new LinkedHashSet<>();
        private String storeSchema;
        private final Set<String> members = new LinkedHashSet<>();

        private Builder(String role) {
            this.roleName = role;
        }

        /** EXECUTE on a change procedure ({@code schema.name}; schema {@code dbo} when none is given). */
        public Builder procedure(String procedure) {
            procedureNames.add(procedure);
            return this;
        }

        /** VIEW CHANGE TRACKING on a table a change procedure reads. */
        public Builder table(String table) {
            tableNames.add(table);
            return this;
        }

        /** The procedure and the table of a generated change procedure. */
        public Builder grantsFor(ChangeProcedureGenerator generated) {
            return generated == null ? procedure(null) : procedure(generated.procedureName()).table(generated.tableName());
        }

        /** Read and write access to the schema of Tidemark's store tables ({@code tidemark} by default there). */
        public Builder storeSchema(String schema) {
            this.storeSchemaName = schema;
            return this;
        }

        /** A database user to add to the role. */
        public Builder member(String user) {
            memberNames.add(user);
            return this;
        }

        /** Checks every name at once (setters only store) and builds the role's script. */
        public LeastPrivilegeRole build() {
            Checks checks = Checks.of("LeastPrivilegeRole");
            role = checks.valid(() -> SqlServerName.checkPart(roleName, "role"));
            procedures.clear();
            tables.clear();
            members.clear();
            for (String procedure : procedureNames) {
                SqlServerName name = checks.valid(
                        () -> SqlServerName.parse(procedure, "procedure").withDefaultSchema("dbo"));
                if (name != null) {
                    procedures.add(name);
                }
            }
            for (String table : tableNames) {
                SqlServerName name = checks.valid(() -> SqlServerName.parse(table, "table").withDefaultSchema("dbo"));
                if (name != null) {
                    tables.add(name);
                }
            }
            storeSchema = storeSchemaName == null ? null
                    : checks.valid(() -> SqlServerName.checkPart(storeSchemaName, "schema"));
            for (String user : memberNames) {
                String member = checks.valid(() -> SqlServerName.checkPart(user, "user"));
                if (member != null) {
                    members.add(member);
                }
            }
            checks.that(!procedureNames.isEmpty() || !tableNames.isEmpty() || storeSchemaName != null,
                    "the role " + (role == null ? roleName : SqlServerName.quote(role))
                            + " grants nothing: add procedure(...), table(...) or grantsFor(...)");
            checks.throwIfAny();
            return new LeastPrivilegeRole(this);
        }
    }
}
