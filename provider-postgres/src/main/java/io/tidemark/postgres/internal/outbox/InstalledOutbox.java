package io.tidemark.postgres.internal.outbox;

import io.tidemark.postgres.internal.FunctionNames;
import io.tidemark.sync.internal.jdbc.Jdbc;
import io.tidemark.sync.internal.sql.PgName;
import io.tidemark.sync.internal.sql.SqlTemplate;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What the catalog holds of one outbox, read in the caller's transaction: whether the outbox table exists and is
 * an outbox, what its install recorded, the generated functions' bodies, the triggers on the captured table that
 * call the capture function, the guard view's columns, the change functions that read the outbox, and the records
 * of the other outboxes in the database. Reads only; every name is passed as a bound parameter.
 */
final class InstalledOutbox {

    /**
     * A generated function as the catalog holds it.
     *
     * @param body       {@code prosrc}
     * @param attributes SECURITY DEFINER, STABLE or IMMUTABLE, then each {@code proconfig} setting
     */
    record Function(String body, List<String> attributes) {
    }

    /**
     * A trigger on the captured table that calls this outbox's capture function, as {@code pg_trigger} records it.
     *
     * @param firing     {@code tgenabled}: O fires in ordinary sessions (as generated), D never, R in replica
     *                   sessions only, A in both
     * @param type       {@code tgtype}: bit 1 row-level, 2 before, 4 insert, 8 delete, 16 update, 32 truncate
     * @param oldTable   the transition table of old rows, or null
     * @param newTable   the transition table of new rows, or null
     * @param restricted whether a WHEN condition or an UPDATE OF column list narrows when it fires
     * @param definition {@code pg_get_triggerdef}, for messages
     */
    record Trigger(String name, char firing, int type, String oldTable, String newTable, boolean restricted,
                   String definition) {
    }

    private static final String RELATION = """
            SELECT to_regclass(?) IS NOT NULL""";

    /**
     * The columns CREATE TABLE of an outbox makes, of either capture shape (change json: full images; changed
     * text[]: keys); the install script's preflight checks the same five.
     */
    private static final String IS_OUTBOX = """
            SELECT count(*) = 5
              FROM pg_catalog.pg_attribute a
             WHERE a.attrelid = to_regclass(?) AND a.attnum > 0 AND NOT a.attisdropped
               AND (a.attname::text, pg_catalog.format_type(a.atttypid, a.atttypmod)) IN
                   (('version', 'bigint'), ('id', 'bigint'), ('xact_id', 'xid8'),
                    ('operation', 'character(1)'), ('change', 'json'), ('changed', 'text[]'))""";

    private static final String COMMENT = """
            SELECT pg_catalog.obj_description(to_regclass(?), 'pg_class')""";

    /** A generated function as {@link OutboxScript#functionAttributes} describes it, from its body on. */
    private static final String FUNCTION = """
            SELECT p.prosrc,
                   CASE WHEN p.prosecdef THEN 'SECURITY DEFINER' END,
                   CASE p.provolatile WHEN 's' THEN 'STABLE' WHEN 'i' THEN 'IMMUTABLE' END,
                   p.proconfig
              FROM pg_catalog.pg_proc p WHERE p.oid = to_regprocedure(?)""";

    private static final String TRIGGERS = """
            SELECT t.tgname, t.tgenabled::text, t.tgtype::integer, t.tgoldtable, t.tgnewtable,
                   t.tgqual IS NOT NULL OR pg_catalog.cardinality(t.tgattr::pg_catalog.int2[]) > 0,
                   pg_catalog.pg_get_triggerdef(t.oid)
              FROM pg_catalog.pg_trigger t
             WHERE t.tgrelid = to_regclass(?) AND NOT t.tgisinternal AND t.tgfoid = to_regprocedure(?)
             ORDER BY t.tgname""";

    private static final String VIEW_COLUMNS = """
            SELECT a.attname
              FROM pg_catalog.pg_attribute a
             WHERE a.attrelid = to_regclass(?) AND a.attnum > 0 AND NOT a.attisdropped
             ORDER BY a.attnum""";

    /**
     * Functions of one json argument whose body is a generated change function over this outbox's request
     * function: the change function, and any left behind under another name.
     */
    private static final String CHANGE_FUNCTIONS = """
            SELECT n.nspname, p.proname
              FROM pg_catalog.pg_proc p
              JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
             WHERE p.pronargs = 1 AND p.proargtypes[0] = 'pg_catalog.json'::pg_catalog.regtype
               AND p.prorettype = 'pg_catalog.json'::pg_catalog.regtype
               AND EXISTS (SELECT FROM pg_catalog.unnest(?::pg_catalog.text[]) AS m(mark)
                            WHERE strpos(p.prosrc, m.mark) > 0)
             ORDER BY n.nspname, p.proname""";

    private static final String RECORDS = """
            SELECT d.description
              FROM pg_catalog.pg_description d
             WHERE d.classoid = 'pg_catalog.pg_class'::pg_catalog.regclass AND d.objsubid = 0
               AND strpos(d.description, '"tidemark":"outbox"') > 0""";

    private final boolean outboxExists;
    private final boolean isOutbox;
    private final boolean stateExists;
    private final boolean wakeUpExists;
    private final Optional<OutboxRecord.Parsed> record;
    private final Map<String, Optional<Function>> functions;
    private final List<Trigger> triggers;
    private final List<String> guardColumns;
    private final List<PgName> changeFunctions;
    private final List<OutboxRecord> otherRecords;

    private InstalledOutbox(Connection c, OutboxNames names, OutboxScript requested) throws SQLException {
        this.outboxExists = Jdbc.queryBoolean(c, RELATION, names.outbox().quoted());
        this.isOutbox = outboxExists && Jdbc.queryBoolean(c, IS_OUTBOX, names.outbox().quoted());
        this.stateExists = Jdbc.queryBoolean(c, RELATION, names.state().quoted());
        this.wakeUpExists = Jdbc.queryBoolean(c, RELATION, names.wakeUp().quoted());
        this.record = stateExists ? OutboxRecord.parse(text(c, COMMENT, names.state().quoted())) : Optional.empty();
        this.functions = new LinkedHashMap<>();
        for (String signature : requested.functionBodies().keySet()) {
            functions.put(signature, function(c, signature));
        }
        this.triggers = triggers(c, names);
        this.guardColumns = strings(c, VIEW_COLUMNS, names.guardView().quoted());
        this.changeFunctions = changeFunctions(c, names);
        this.otherRecords = otherRecords(c, names);
    }

    static InstalledOutbox read(Connection connection, OutboxNames names, OutboxScript requested)
            throws SQLException {
        return new InstalledOutbox(connection, names, requested);
    }

    /** Whether a relation of the outbox table's name exists (an outbox or not). */
    boolean outboxExists() {
        return outboxExists;
    }

    /** Whether that relation has the columns of an outbox. */
    boolean isOutbox() {
        return isOutbox;
    }

    boolean stateExists() {
        return stateExists;
    }

    /** Whether the wake-up flag's table exists. */
    boolean wakeUpExists() {
        return wakeUpExists;
    }

    /** The state table's comment read as a record; empty when it is not one (an install of an earlier version). */
    Optional<OutboxRecord.Parsed> record() {
        return record;
    }

    /** Each function the requested script generates as stored, by signature; empty when it is missing. */
    Map<String, Optional<Function>> functions() {
        return functions;
    }

    List<Trigger> triggers() {
        return triggers;
    }

    /** The columns of the guard view, which are the captured columns; empty when the view is missing. */
    List<String> guardColumns() {
        return guardColumns;
    }

    /** Every function that is a generated change function over this outbox. */
    List<PgName> changeFunctions() {
        return changeFunctions;
    }

    /** Records of outboxes under another name that capture the same table. */
    List<OutboxRecord> otherOutboxesOfTable(String table) {
        return otherRecords.stream().filter(r -> r.table().equals(table)).toList();
    }

    /** The outbox under another name whose record says it serves {@code changeFunction}, if any. */
    Optional<String> otherOutboxServing(String changeFunction) {
        return otherRecords.stream().filter(r -> r.changeFunction().equals(changeFunction))
                .map(OutboxRecord::outbox).findFirst();
    }

    /**
     * Texts one of which every generated change function over this outbox holds, and no other function returning
     * json does: its read of the outbox's state, and (functions generated before the request was checked in the
     * change function itself) its call of the request function.
     */
    static List<String> changeFunctionMarks(OutboxNames names) {
        return List.of(SqlTemplate.of("FROM {{state}} AS s;").with("state", names.state().quoted()).render(),
                SqlTemplate.of("FROM {{request_function}}(payload))")
                        .with("request_function", names.requestFunction().quoted()).render());
    }

    /** Whether {@code body} is that of a generated change function over this outbox (see {@link #changeFunctionMarks}). */
    static boolean isChangeFunctionBody(String body, OutboxNames names) {
        return changeFunctionMarks(names).stream().anyMatch(body::contains);
    }

    private static Optional<Function> function(Connection c, String signature) throws SQLException {
        try (PreparedStatement s = c.prepareStatement(FUNCTION)) {
            s.setString(1, signature);
            try (ResultSet rs = s.executeQuery()) {
                if (!rs.next()) {
                    return Optional.empty();
                }
                List<String> attributes = new ArrayList<>();
                for (int column = 2; column <= 3; column++) {
                    if (rs.getString(column) != null) {
                        attributes.add(rs.getString(column));
                    }
                }
                Array settings = rs.getArray(4);
                if (settings != null) {
                    attributes.addAll(List.of((String[]) settings.getArray()));
                }
                return Optional.of(new Function(rs.getString(1), attributes));
            }
        }
    }

    private static List<Trigger> triggers(Connection c, OutboxNames names) throws SQLException {
        List<Trigger> triggers = new ArrayList<>();
        try (PreparedStatement s = c.prepareStatement(TRIGGERS)) {
            s.setString(1, names.table().quoted());
            s.setString(2, names.captureFunction().quoted() + "()");
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    triggers.add(new Trigger(rs.getString(1), rs.getString(2).charAt(0), rs.getInt(3),
                            rs.getString(4), rs.getString(5), rs.getBoolean(6), rs.getString(7)));
                }
            }
        }
        return triggers;
    }

    private static List<PgName> changeFunctions(Connection c, OutboxNames names) throws SQLException {
        List<PgName> functions = new ArrayList<>();
        try (PreparedStatement s = c.prepareStatement(CHANGE_FUNCTIONS)) {
            s.setArray(1, c.createArrayOf("text", changeFunctionMarks(names).toArray()));
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    functions.add(PgName.of(rs.getString(1), rs.getString(2)));
                }
            }
        }
        return functions;
    }

    /** The readable records of every outbox in the database but this one. */
    private static List<OutboxRecord> otherRecords(Connection c, OutboxNames names) throws SQLException {
        List<OutboxRecord> others = new ArrayList<>();
        try (PreparedStatement s = c.prepareStatement(RECORDS); ResultSet rs = s.executeQuery()) {
            while (rs.next()) {
                OutboxRecord.parse(rs.getString(1)).map(OutboxRecord.Parsed::record).ifPresent(r -> {
                    if (!r.outbox().equals(FunctionNames.text(names.outbox()))) {
                        others.add(r);
                    }
                });
            }
        }
        return others;
    }

    private static String text(Connection c, String sql, String parameter) throws SQLException {
        try (PreparedStatement s = c.prepareStatement(sql)) {
            s.setString(1, parameter);
            try (ResultSet rs = s.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        }
    }

    private static List<String> strings(Connection c, String sql, String parameter) throws SQLException {
        List<String> values = new ArrayList<>();
        try (PreparedStatement s = c.prepareStatement(sql)) {
            s.setString(1, parameter);
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    values.add(rs.getString(1));
                }
            }
        }
        return values;
    }
}
