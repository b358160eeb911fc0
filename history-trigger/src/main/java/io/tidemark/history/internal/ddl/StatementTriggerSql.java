package io.tidemark.history.internal.ddl;

import io.tidemark.history.internal.catalog.Column;
import java.util.List;

/**
 * The body of the write function for {@link io.tidemark.history.TriggerMode#STATEMENT}: the same rules as the row
 * trigger, applied set-based to the statement's transition tables ({@code new_rows}, {@code old_rows}). Three
 * building blocks cover every event: tombstones for rows that are gone, next versions for rows that changed, and
 * chain starts for rows that are new, each clamped exactly as the row trigger clamps.
 *
 * <p>Each block is generated twice. Statements of up to {@value #SMALL} rows run it as static SQL, whose plans
 * PL/pgSQL caches. Larger ones run it with EXECUTE, planned for the size of their transition tables: transition
 * tables have no statistics, and a plan cached from small statements nests loops over them, which is quadratic
 * for a thousand rows (measured: a 1000-row UPDATE took six times as long).
 */
final class StatementTriggerSql {

    /** Statements with more rows than this plan their history writes afresh. */
    static final int SMALL = 64;

    private final HistorySql sql;
    private final String history;
    private final String insertColumns;

    StatementTriggerSql(HistorySql sql) {
        this.sql = sql;
        this.history = sql.history;
        this.insertColumns = HistorySql.columnList(sql.shape.versioned(), Column::quoted)
                + ", valid_from, valid_to, operation, chain_no, " + HistorySql.CONTEXT_COLUMNS;
    }

    /** Static SQL reads the function's variables; dynamic SQL gets them as $1 (now) and $2..$6 (context). */
    private enum Style {
        STATIC("_now", HistorySql.CONTEXT_VALUES),
        DYNAMIC("$1", "$2, $3, $4, $5, $6");

        final String now;
        final String context;

        Style(String now, String context) {
            this.now = now;
            this.context = context;
        }

        /** Wraps one statement (without its semicolon) to run in this style. */
        String run(String statement) {
            return this == STATIC ? statement + ";\n"
                    : "        EXECUTE $sql$\n" + statement + "\n        $sql$ USING _now, " + HistorySql.CONTEXT_VALUES + ";\n";
        }
    }

    String body() {
        String newKeysOnly = "SELECT n.* FROM new_rows AS n WHERE NOT EXISTS (SELECT 1 FROM old_rows AS o WHERE "
                + sql.keyMatch("o.", "n.") + ")";
        String goneKeysOnly = "SELECT o.* FROM old_rows AS o WHERE NOT EXISTS (SELECT 1 FROM new_rows AS n WHERE "
                + sql.keyMatch("n.", "o.") + ")";
        String allNew = "SELECT n.* FROM new_rows AS n";
        String allOld = "SELECT o.* FROM old_rows AS o";
        return "\n"
                + sql.contextDeclarations()
                + "    _written         bigint;\n"
                + "    _expected        bigint;\n"
                + "BEGIN\n"
                + sql.tableGuard()
                + "\n"
                + "    IF TG_OP = 'INSERT' THEN\n"
                + bySize("new_rows", style -> chainStarts(allNew, style))
                + "    ELSIF TG_OP = 'UPDATE' THEN\n"
                + "        -- Old and new rows are paired by primary key. A key that only the old rows have was\n"
                + "        -- moved away (its chain ends with a tombstone); one that only the new rows have starts a chain.\n"
                + bySize("new_rows", style -> tombstones(goneKeysOnly, style) + nextVersions(style)
                        + chainStarts(newKeysOnly, style))
                + "    ELSE\n"
                + "        -- DELETE\n"
                + bySize("old_rows", style -> tombstones(allOld, style))
                + "    END IF;\n"
                + "    RETURN NULL;\n"
                + "END;\n";
    }

    private static String bySize(String transitionTable, java.util.function.Function<Style, String> block) {
        return "        IF (SELECT pg_catalog.count(*) FROM " + transitionTable + ") <= " + SMALL + " THEN\n"
                + indent(block.apply(Style.STATIC))
                + "        ELSE\n"
                + indent(block.apply(Style.DYNAMIC))
                + "        END IF;\n";
    }

    private static String indent(String lines) {
        return lines.replaceAll("(?m)^(?=.)", "    ");
    }

    /** Closes the open version of every row of {@code source} and writes its tombstone, as a DELETE does. */
    private String tombstones(String source, Style style) {
        return style.run("        WITH gone AS (" + source + "),\n"
                + "             closed AS (\n"
                + close("gone", style)
                + "        INSERT INTO " + history + " (" + insertColumns + ")\n"
                + "        SELECT " + prefixed("g.") + ", COALESCE(c.valid_to, " + style.now + "), COALESCE(c.valid_to, "
                + style.now + "), 3, COALESCE(c.chain_no, 1), " + style.context + "\n"
                + "          FROM gone AS g LEFT JOIN closed AS c ON " + sql.keyMatch("c.", "g."));
    }

    /** For rows whose versioned columns changed: close the open version and open the next exactly there. */
    private String nextVersions(Style style) {
        return "        -- Rows where no versioned column changed write nothing (json, xml, ... compared as text).\n"
                + style.run("        WITH changed AS (\n"
                + "                 SELECT n.* FROM new_rows AS n\n"
                + "                  WHERE EXISTS (SELECT 1 FROM old_rows AS o WHERE " + sql.keyMatch("o.", "n.") + "\n"
                + "                                   AND " + HistorySql.row(sql.shape.versioned(), "n.", true)
                + "\n                                       IS DISTINCT FROM " + HistorySql.row(sql.shape.versioned(), "o.", true)
                + ")),\n"
                + "             closed AS (\n"
                + close("changed", style)
                + "        INSERT INTO " + history + " (" + insertColumns + ")\n"
                + "        SELECT " + prefixed("g.") + ", COALESCE(c.valid_to, " + style.now + "), 'infinity', 2,"
                + " COALESCE(c.chain_no, 1), " + style.context + "\n"
                + "          FROM changed AS g LEFT JOIN closed AS c ON " + sql.keyMatch("c.", "g."));
    }

    /**
     * Opens the first version of every row of {@code source}, no earlier than the end of the key's last version,
     * with the next chain number. The chain-start index refuses a chain a concurrent transaction started
     * unseen; this statement then fails with a serialization error rather than skip a row.
     */
    private String chainStarts(String source, Style style) {
        String count = "SELECT pg_catalog.count(*) FROM (" + source + ") AS s";
        return style.run("        INSERT INTO " + history + " (" + insertColumns + ")\n"
                + "        SELECT " + prefixed("s.") + ", GREATEST(" + style.now + ", l.valid_to), 'infinity', 1,"
                + " COALESCE(l.chain_no, 0) + 1, " + style.context + "\n"
                + "          FROM (" + source + ") AS s\n"
                + "          LEFT JOIN LATERAL (\n"
                + "                SELECT h.valid_to, h.chain_no FROM " + history + " AS h\n"
                + "                 WHERE " + sql.keyMatch("h.", "s.") + "\n"
                + "                 ORDER BY h.valid_from DESC, h.valid_to DESC\n"
                + "                 LIMIT 1\n"
                + "                   FOR UPDATE) AS l ON true\n"
                + "        ON CONFLICT (" + sql.keyList("") + ", chain_no) WHERE operation = 1 DO NOTHING")
                + "        GET DIAGNOSTICS _written = ROW_COUNT;\n"
                + (style == Style.STATIC ? "        _expected := (" + count + ");\n"
                        : "        EXECUTE $sql$" + count + "$sql$ INTO _expected;\n")
                + "        IF _written < _expected THEN\n"
                + "            RAISE EXCEPTION 'tidemark: a concurrent transaction started a history chain of %.% that"
                + " this statement also starts', TG_TABLE_SCHEMA, TG_TABLE_NAME\n"
                + "                  USING ERRCODE = 'serialization_failure';\n"
                + "        END IF;\n";
    }

    /**
     * Closes the open versions of the keys in {@code source}. A single-column key is matched with
     * {@code = ANY(ARRAY(...))}, which is always an index lookup per key: transition tables have no statistics, and
     * a join would let a misestimate choose a scan of every open version of a large history.
     */
    private String close(String source, Style style) {
        List<Column> keys = sql.shape.keyColumns();
        String keyMatch = keys.size() == 1
                ? "h." + keys.get(0).quoted() + " = ANY (ARRAY(SELECT g." + keys.get(0).quoted() + " FROM " + source
                + " AS g))"
                : "(" + sql.keyList("h.") + ") IN (SELECT " + sql.keyList("g.") + " FROM " + source + " AS g)";
        return "                 UPDATE " + history + " AS h\n"
                + "                    SET valid_to = GREATEST(" + style.now + ", h.valid_from + interval '1 microsecond')\n"
                + "                  WHERE " + keyMatch + " AND h.valid_to = 'infinity'\n"
                + "                 RETURNING " + sql.keyList("h.") + ", h.valid_to, h.chain_no)\n";
    }

    private String prefixed(String alias) {
        return HistorySql.columnList(sql.shape.versioned(), c -> alias + c.quoted());
    }
}
