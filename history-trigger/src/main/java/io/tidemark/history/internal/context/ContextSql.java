package io.tidemark.history.internal.context;

import io.tidemark.history.ChangeContext;
import io.tidemark.sync.internal.sql.PgName;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.function.Function;

/**
 * The statement that hands a {@link ChangeContext} to the trigger: five {@code set_config(..., true)} calls in
 * one SELECT. Every key is always set, absent ones to '' (read back as NULL), so a later unit of work in the same
 * transaction never inherits an earlier one's values.
 */
public final class ContextSql {

    /** How many parameters {@link #preparedPrefix()} binds. */
    public static final int PARAMETERS = 5;

    private static final List<String> KEYS = List.of("changed_by", "changed_by_name", "correlation_id", "reason",
            "extra");
    private static final List<Function<ChangeContext, java.util.Optional<String>>> VALUES = List.of(
            ChangeContext::changedBy, ChangeContext::changedByName, ChangeContext::correlationId,
            ChangeContext::reason, ChangeContext::extra);

    private final String prefix;
    private final String select;

    public ContextSql(String settingsPrefix) {
        this.prefix = settingsPrefix;
        StringBuilder sql = new StringBuilder("SELECT ");
        for (int i = 0; i < KEYS.size(); i++) {
            sql.append(i == 0 ? "" : ", ").append("pg_catalog.set_config(")
                    .append(PgName.literal(prefix + "." + KEYS.get(i))).append(", ?, true)");
        }
        this.select = sql.toString();
    }

    /** The push with five bind parameters, ending in "; " so a statement can follow in the same round trip. */
    public String preparedPrefix() {
        return select + "; ";
    }

    /** Binds the context's values to parameters {@code first .. first + 4}. */
    public void bind(PreparedStatement statement, ChangeContext context, int first) throws SQLException {
        for (int i = 0; i < VALUES.size(); i++) {
            statement.setString(first + i, VALUES.get(i).apply(context).orElse(""));
        }
    }

    /**
     * The push with the values as dollar-quoted literals, for a plain {@link java.sql.Statement} that cannot bind.
     * The tag is chosen so that no value contains it, which makes the quoting exact whatever the value holds.
     */
    public String literalPrefix(ChangeContext context) {
        StringBuilder sql = new StringBuilder("SELECT ");
        for (int i = 0; i < KEYS.size(); i++) {
            String value = VALUES.get(i).apply(context).orElse("");
            sql.append(i == 0 ? "" : ", ").append("pg_catalog.set_config(")
                    .append(PgName.literal(prefix + "." + KEYS.get(i))).append(", ").append(dollarQuote(value))
                    .append(", true)");
        }
        return sql.append("; ").toString();
    }

    /** Pushes the context in a statement of its own: one round trip. */
    public void push(Connection connection, ChangeContext context) throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement(select)) {
            bind(ps, context, 1);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
            }
        }
    }

    static String dollarQuote(String value) {
        String tag = "$ctx$";
        for (int n = 0; value.contains(tag); n++) {
            tag = "$ctx" + n + "$";
        }
        return tag + value + tag;
    }
}
