package io.tidemark.history.internal.ddl;

import io.tidemark.history.internal.catalog.Column;
import io.tidemark.sync.internal.sql.SqlTemplate;

import java.util.List;
import java.util.function.Function;

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
        this.insertColumns = SqlTemplate.of("{{versioned}}, valid_from, valid_to, operation, chain_no, {{context}}")
                .with("versioned", HistorySql.columnList(sql.shape.versioned(), Column::quoted))
                .with("context", HistorySql.CONTEXT_COLUMNS).render();
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
            return this == STATIC ? SqlTemplate.of("{{statement}};\n").with("statement", statement).render()
                    : SqlTemplate.of("""
                            EXECUTE $sql$
                    {{statement}}
                            $sql$ USING _now, {{context}};
                    """).with("statement", statement).with("context", HistorySql.CONTEXT_VALUES).render();
        }
    }

    String body() {
        String newKeysOnly = SqlTemplate.of(
                        "SELECT n.* FROM new_rows AS n WHERE NOT EXISTS (SELECT 1 FROM old_rows AS o WHERE {{match}})")
                .with("match", sql.keyMatch("o.", "n.")).render();
        String goneKeysOnly = SqlTemplate.of(
                        "SELECT o.* FROM old_rows AS o WHERE NOT EXISTS (SELECT 1 FROM new_rows AS n WHERE {{match}})")
                .with("match", sql.keyMatch("n.", "o.")).render();
        String allNew = "SELECT n.* FROM new_rows AS n";
        String allOld = "SELECT o.* FROM old_rows AS o";
        return SqlTemplate.of("""

                {{context_declarations}}    _written         bigint;
                    _expected        bigint;
                BEGIN
                {{table_guard}}
                    IF TG_OP OPERATOR(pg_catalog.=) 'INSERT' THEN
                {{inserts}}    ELSIF TG_OP OPERATOR(pg_catalog.=) 'UPDATE' THEN
                        -- Old and new rows are paired by primary key. A key that only the old rows have was
                        -- moved away (its chain ends with a tombstone); one that only the new rows have starts a chain.
                {{updates}}    ELSE
                        -- DELETE
                {{deletes}}    END IF;
                    RETURN NULL;
                END;
                """)
                .with("context_declarations", sql.contextDeclarations())
                .with("table_guard", sql.tableGuard())
                .with("inserts", bySize("new_rows", style -> chainStarts(allNew, style)))
                .with("updates", bySize("new_rows", style -> tombstones(goneKeysOnly, style) + nextVersions(style)
                        + chainStarts(newKeysOnly, style)))
                .with("deletes", bySize("old_rows", style -> tombstones(allOld, style)))
                .render();
    }

    /** Set-based static SQL for small transition tables, dynamic SQL (planned for the real size) above. */
    private static String bySize(String transitionTable, Function<Style, String> block) {
        return SqlTemplate.of("""
                        IF (SELECT pg_catalog.count(*) FROM {{transition_table}}) OPERATOR(pg_catalog.<=) {{small}} THEN
                {{static}}        ELSE
                {{dynamic}}        END IF;
                """)
                .with("transition_table", transitionTable)
                .with("small", SMALL)
                .with("static", indent(block.apply(Style.STATIC)))
                .with("dynamic", indent(block.apply(Style.DYNAMIC)))
                .render();
    }

    private static String indent(String lines) {
        return lines.replaceAll("(?m)^(?=.)", "    ");
    }

    /** Closes the open version of every row of {@code source} and writes its tombstone, as a DELETE does. */
    private String tombstones(String source, Style style) {
        return style.run(SqlTemplate.of("""
                        WITH gone AS ({{source}}),
                             closed AS (
                {{close}}        INSERT INTO {{history}} ({{insert_columns}})
                        SELECT {{gone_values}}, COALESCE(c.valid_to, {{now}}), COALESCE(c.valid_to, {{now}}), 3, COALESCE(c.chain_no, 1), {{context}}
                          FROM gone AS g LEFT JOIN closed AS c ON {{key_match}}""")
                .with("source", source)
                .with("close", close("gone", style))
                .with("history", history)
                .with("insert_columns", insertColumns)
                .with("gone_values", prefixed("g."))
                .with("now", style.now)
                .with("context", style.context)
                .with("key_match", sql.keyMatch("c.", "g."))
                .render());
    }

    /** For rows whose versioned columns changed: close the open version and open the next exactly there. */
    private String nextVersions(Style style) {
        return "        -- Rows where no versioned column changed write nothing (json, xml, ... compared as text).\n"
                + style.run(SqlTemplate.of("""
                        WITH changed AS (
                                 SELECT n.* FROM new_rows AS n
                                  WHERE EXISTS (SELECT 1 FROM old_rows AS o WHERE {{key_match_old}}
                                                   AND NOT ({{unchanged}}))),
                             closed AS (
                {{close}}        INSERT INTO {{history}} ({{insert_columns}})
                        SELECT {{changed_values}}, COALESCE(c.valid_to, {{now}}), 'infinity', 2, COALESCE(c.chain_no, 1), {{context}}
                          FROM changed AS g LEFT JOIN closed AS c ON {{key_match}}""")
                .with("key_match_old", sql.keyMatch("o.", "n."))
                .with("unchanged", sql.unchanged("n.", "o.", "                                                        AND "))
                .with("close", close("changed", style))
                .with("history", history)
                .with("insert_columns", insertColumns)
                .with("changed_values", prefixed("g."))
                .with("now", style.now)
                .with("context", style.context)
                .with("key_match", sql.keyMatch("c.", "g."))
                .render());
    }

    /**
     * Opens the first version of every row of {@code source}, no earlier than the end of the key's last version,
     * with the next chain number. The chain-start index refuses a chain a concurrent transaction started
     * unseen; this statement then fails with a serialization error rather than skip a row.
     */
    private String chainStarts(String source, Style style) {
        String count = SqlTemplate.of("SELECT pg_catalog.count(*) FROM ({{source}}) AS s").with("source", source).render();
        String insert = SqlTemplate.of("""
                        INSERT INTO {{history}} ({{insert_columns}})
                        SELECT {{source_values}}, GREATEST({{now}}, l.valid_to), 'infinity', 1, COALESCE(l.chain_no, 0) OPERATOR(pg_catalog.+) 1, {{context}}
                          FROM ({{source}}) AS s
                          LEFT JOIN LATERAL (
                                SELECT h.valid_to, h.chain_no FROM {{history}} AS h
                                 WHERE {{key_match}}
                                 ORDER BY h.valid_from DESC, h.valid_to DESC
                                 LIMIT 1
                                   FOR UPDATE) AS l ON true
                        ON CONFLICT ({{key_list}}, chain_no) WHERE operation OPERATOR(pg_catalog.=) 1 DO NOTHING\
                """)
                .with("history", history)
                .with("insert_columns", insertColumns)
                .with("source_values", prefixed("s."))
                .with("now", style.now)
                .with("context", style.context)
                .with("source", source)
                .with("key_match", sql.keyMatch("h.", "s."))
                .with("key_list", sql.keyList(""))
                .render();
        return SqlTemplate.of("""
                {{insert}}        GET DIAGNOSTICS _written = ROW_COUNT;
                {{expected}}        IF _written OPERATOR(pg_catalog.<) _expected THEN
                            RAISE EXCEPTION 'tidemark: a concurrent transaction started a history chain of %.% that this statement also starts', TG_TABLE_SCHEMA, TG_TABLE_NAME
                                  USING ERRCODE = 'serialization_failure';
                        END IF;
                """)
                .with("insert", style.run(insert))
                .with("expected", SqlTemplate.of(style == Style.STATIC
                                ? "        _expected := ({{count}});\n"
                                : "        EXECUTE $sql${{count}}$sql$ INTO _expected;\n")
                        .with("count", count).render())
                .render();
    }

    /**
     * Closes the open versions of the keys in {@code source}. A single-column key is matched with
     * {@code = ANY(ARRAY(...))}, which is always an index lookup per key: transition tables have no statistics, and
     * a join would let a misestimate choose a scan of every open version of a large history.
     */
    private String close(String source, Style style) {
        List<Column> keys = sql.shape.keyColumns();
        String keyMatch = keys.size() == 1
                ? SqlTemplate.of("h.{{key}} OPERATOR(pg_catalog.=) ANY (ARRAY(SELECT g.{{key}} FROM {{source}} AS g))")
                        .with("key", keys.get(0).quoted()).with("source", source).render()
                : SqlTemplate.of("({{history_keys}}) OPERATOR(pg_catalog.=) ANY (SELECT {{source_keys}} FROM {{source}} AS g)")
                        .with("history_keys", sql.keyList("h.")).with("source_keys", sql.keyList("g."))
                        .with("source", source).render();
        return SqlTemplate.of("""
                                 UPDATE {{history}} AS h
                                    SET valid_to = GREATEST({{now}}, h.valid_from OPERATOR(pg_catalog.+) interval '1 microsecond')
                                  WHERE {{key_match}} AND h.valid_to OPERATOR(pg_catalog.=) 'infinity'
                                 RETURNING {{keys}}, h.valid_to, h.chain_no)
                """)
                .with("history", history)
                .with("now", style.now)
                .with("key_match", keyMatch)
                .with("keys", sql.keyList("h."))
                .render();
    }

    private String prefixed(String alias) {
        return HistorySql.columnList(sql.shape.versioned(), c -> alias + c.quoted());
    }
}
