package io.tidemark.postgres.internal.outbox;

import io.tidemark.postgres.OutboxDifference;
import io.tidemark.postgres.internal.FunctionNames;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.internal.sql.SqlTemplate;
import io.tidemark.sync.internal.sql.PgName;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * install, upgrade, differences and the upgrade script of one outbox: each compares what the database holds with
 * what the configuration generates ({@link OutboxPlan}) before deciding what to run. install and upgrade hold the
 * outbox's advisory lock from before they read until they commit, so that concurrent installers queue and each
 * one decides on what the previous one committed.
 */
public final class OutboxMaintenance {

    /** The script of the configuration, with the shape read on the connection that will run it. */
    @FunctionalInterface
    public interface ScriptFactory {
        OutboxScript script(Connection connection) throws SQLException;
    }

    private static final String PIN_SEARCH_PATH = "SET LOCAL search_path = pg_catalog, pg_temp";

    private final OutboxNames names;
    private final ScriptFactory factory;

    public OutboxMaintenance(OutboxNames names, ScriptFactory factory) {
        this.names = names;
        this.factory = factory;
    }

    /**
     * Installs a fresh outbox, does nothing when the same one is installed, records one installed by an earlier
     * version when it is exactly this one, and otherwise refuses with every difference, changing nothing.
     */
    public void install(DataSource dataSource) {
        OutboxInstaller.install(dataSource, names.tableText(), connection -> {
            Decision d = decide(connection);
            return switch (d.plan.kind()) {
                case FRESH -> d.script.render();
                case UNCHANGED -> OutboxScript.lockStatement(names); // held already: nothing to do
                case ADOPT -> d.script.recordStatement();
                case DIFFERENT -> throw drift(d.plan);
            };
        });
    }

    /**
     * Makes the installed outbox the configured one in one transaction: replaces what differs, drops the change
     * functions and triggers the configuration no longer generates, keeps the captured changes.
     *
     * @return the differences found before the upgrade, as {@link #differences} lists them (empty when there was
     *         nothing to do)
     */
    public List<OutboxDifference> upgrade(DataSource dataSource) {
        List<OutboxDifference> found = new ArrayList<>();
        OutboxInstaller.install(dataSource, names.tableText(), connection -> {
            Decision d = decide(connection);
            found.addAll(d.reported());
            return switch (d.plan.kind()) {
                case FRESH -> d.script.render();
                case UNCHANGED -> OutboxScript.lockStatement(names);
                case ADOPT -> d.script.recordStatement();
                case DIFFERENT -> upgradeScript(d);
            };
        });
        return List.copyOf(found);
    }

    /** What differs between the installed outbox and the configuration; changes nothing. */
    public List<OutboxDifference> differences(DataSource dataSource) {
        try (Connection connection = dataSource.getConnection()) {
            return new Decision(connection).reported();
        } catch (SQLException e) {
            throw OutboxInstaller.failure(dataSource, "compare the installed outbox of " + names.tableText()
                    + " with its configuration", e);
        }
    }

    /**
     * The SQL {@link #upgrade} would run on this database now, for review and for a migration tool: the
     * differences as comments, the drops of what is orphaned, then the install script.
     */
    public String upgradeScript(DataSource dataSource) {
        try (Connection connection = dataSource.getConnection()) {
            Decision d = new Decision(connection);
            return switch (d.plan.kind()) {
                case FRESH -> d.script.render();
                case UNCHANGED -> "-- The outbox of " + OutboxScript.comment(names.tableText())
                        + " is installed as configured: nothing to upgrade.\n";
                case ADOPT -> d.script.recordStatement();
                case DIFFERENT -> upgradeScript(d);
            };
        } catch (SQLException e) {
            throw OutboxInstaller.failure(dataSource, "read the installed outbox of " + names.tableText(), e);
        }
    }

    /**
     * Pins the search_path, takes the lock, then reads: the decision holds until the transaction ends. The catalog
     * reads and the script call functions and operators by their bare names as the installing role, often a
     * privileged one: pinned to pg_catalog for the transaction, a function of such a name in a schema the session
     * puts ahead of pg_catalog does not run in their place. (The script schema-qualifies every object it names.)
     */
    private Decision decide(Connection connection) throws SQLException {
        try (Statement s = connection.createStatement()) {
            s.execute(PIN_SEARCH_PATH);
            s.execute(OutboxScript.lockStatement(names));
        }
        return new Decision(connection);
    }

    private String upgradeScript(Decision d) {
        d.plan.upgradeRefusal().ifPresent(reason -> {
            throw TidemarkException.forObject(ErrorCode.SCHEMA_CHANGE_REFUSED, "outbox " + names.tableText(), reason
                    + ". Nothing was changed.");
        });
        List<String> drops = new ArrayList<>();
        for (PgName function : d.plan.orphanedFunctions()) {
            drops.add(SqlTemplate.of("DROP FUNCTION IF EXISTS {{function}}(json);")
                    .with("function", function.quoted()).render());
        }
        for (String trigger : d.plan.orphanedTriggers()) {
            drops.add(SqlTemplate.of("DROP TRIGGER IF EXISTS {{trigger}} ON {{table}};")
                    .with("trigger", PgName.quote(trigger)).with("table", names.table().quoted()).render());
        }
        List<String> enable = new ArrayList<>();
        for (String trigger : d.plan.triggersToEnable()) {
            enable.add(SqlTemplate.of("ALTER TABLE {{table}} ENABLE TRIGGER {{trigger}};")
                    .with("table", names.table().quoted()).with("trigger", PgName.quote(trigger)).render());
        }
        return SqlTemplate.of("""
                -- =====================================================================================================
                -- Tidemark outbox upgrade for {{table}}
                -- =====================================================================================================
                -- Run in ONE transaction at READ COMMITTED, as the install script that follows. What differs from
                -- the installed outbox:
                {{differences}}
                --
                -- The changes already captured in {{outbox}} stay and keep the shape they were captured with:
                -- readers receive them as they were, then the changes captured after the upgrade in the new shape.
                {{lock}}

                -- Remove what the new configuration no longer generates.
                {{drops}}

                {{script}}{{pending}}{{enable}}""")
                .with("table", OutboxScript.comment(names.tableText()))
                .with("differences", d.plan.differences().stream()
                        .map(x -> "--   " + OutboxScript.comment(x.toString())).collect(Collectors.joining("\n")))
                .with("outbox", OutboxScript.comment(FunctionNames.text(names.outbox())))
                .with("lock", OutboxScript.lockStatement(names))
                .with("drops", drops.isEmpty() ? "-- (nothing)" : String.join("\n", drops))
                .with("script", d.script.render())
                .with("pending", pendingUpdatesGuard(d.plan.movedPayloadKeys()))
                .with("enable", enable.isEmpty() ? "" : SqlTemplate.of("""

                        -- Generated triggers that were disabled (or set to fire in replica sessions) by hand: \
                        CREATE OR REPLACE TRIGGER keeps that state.
                        {{statements}}
                        """).with("statements", String.join("\n", enable)).render())
                .render();
    }

    /**
     * KEYS: an outbox's pending updates name their changed columns by payload key. After a payload key changes, the
     * change function looks for the new key, so a pending update naming the old one would lose that column from
     * {@code $changed} (a destination applying only the listed columns never writes it). Refused while such an
     * update is pending. Checked after the script: its CREATE TRIGGER waits for running writers and holds off new
     * ones until commit, so no update is captured under the old keys after the check.
     */
    private String pendingUpdatesGuard(List<String> movedPayloadKeys) {
        if (movedPayloadKeys.isEmpty()) {
            return "";
        }
        String outbox = FunctionNames.text(names.outbox());
        return SqlTemplate.of("""

                -- Keys only: pending updates name their changed columns by the payload keys {{keys_comment}},
                -- which this upgrade renames. Refused while one is pending: readers would miss those columns.
                DO $pending$
                BEGIN
                    IF EXISTS (SELECT FROM {{outbox}} AS o
                                WHERE o.changed OPERATOR(pg_catalog.&&) ARRAY[{{keys}}]::pg_catalog.text[]) THEN
                        RAISE EXCEPTION {{message}};
                    END IF;
                END
                $pending$;
                """)
                .with("keys_comment", OutboxScript.comment(String.join(", ", movedPayloadKeys)))
                .with("outbox", names.outbox().quoted())
                .with("keys", movedPayloadKeys.stream().map(PgName::literal).collect(Collectors.joining(", ")))
                .with("message", PgName.literal(("The outbox " + outbox + " holds pending updates whose $changed"
                        + " names the payload keys " + String.join(", ", movedPayloadKeys) + ", which this upgrade"
                        + " renames: readers would miss those columns. Keep the payload keys until every reader has"
                        + " caught up and PostgresOutbox.trim has deleted those updates, then upgrade; or uninstall"
                        + " the outbox and install it with the new payload keys (a reader whose watermark is older"
                        + " gets a full snapshot, ReasonCode 1). Nothing was changed.").replace("%", "%%")))
                .render();
    }

    private TidemarkException drift(OutboxPlan plan) {
        String how = switch (plan.installed()) {
            case RECORDED -> "is installed with other options than requested";
            case UNRECORDED -> "carries no record of its options (installed by an earlier Tidemark version, or its"
                    + " record was overwritten), and differs from what this configuration generates";
            case NOTHING -> "is not installed, and installing " + FunctionNames.text(names.outbox())
                    + " as configured would conflict with what the database holds";
        };
        String remedy = plan.upgradeRefusal().map(reason -> " An upgrade cannot do it: " + reason + ".")
                .orElse(" To change it, call PostgresOutbox.upgrade(dataSource) (one transaction; the captured"
                        + " changes are kept), or review PostgresOutbox.upgradeScript(dataSource) and run it as a"
                        + " migration. PostgresOutbox.differences(dataSource) lists the differences.");
        return TidemarkException.forObject(ErrorCode.SCHEMA_DRIFT, "outbox " + names.tableText(), "The outbox of "
                + names.tableText() + " " + how + "; nothing was changed. " + plan.differences().size()
                + " difference(s): "
                + plan.differences().stream().map(OutboxDifference::toString).collect(Collectors.joining("; "))
                + "." + remedy);
    }

    /** The configuration's script and what it means for the database, read on one connection. */
    private final class Decision {
        final OutboxScript script;
        final InstalledOutbox installed;
        final OutboxPlan plan;

        Decision(Connection connection) throws SQLException {
            this.script = factory.script(connection);
            this.installed = InstalledOutbox.read(connection, names, script);
            this.plan = OutboxPlan.compare(names, script, installed);
        }

        /** The plan's differences; where there is no outbox to differ from, that this one is not installed. */
        List<OutboxDifference> reported() {
            if (plan.kind() != OutboxPlan.Kind.FRESH) {
                return plan.differences();
            }
            return List.of(new OutboxDifference("outbox " + FunctionNames.text(names.outbox()),
                    installed.outboxExists() ? "a table that is not a Tidemark outbox" : "not installed",
                    "installed"));
        }
    }
}
