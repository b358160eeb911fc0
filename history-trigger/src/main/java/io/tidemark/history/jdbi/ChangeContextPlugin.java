package io.tidemark.history.jdbi;

import io.tidemark.history.ChangeContext;
import io.tidemark.history.ContextualDataSource;
import io.tidemark.history.TemporalTable;
import org.jdbi.v3.core.spi.JdbiPlugin;

import java.sql.Connection;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * JDBI integration: every handle's connection hands the current unit of work's {@link ChangeContext} to the
 * history trigger automatically, in the same round trip as the statement that writes (see
 * {@link ContextualDataSource} for the exact rules).
 *
 * <pre>{@code
 * Jdbi jdbi = Jdbi.create(dataSource).installPlugin(ChangeContextPlugin.create());
 * ChangeContext.runWith(ChangeContext.builder().changedBy("alice").reason("OPS-12").build(), () ->
 *         jdbi.useTransaction(h -> h.execute("UPDATE policies SET premium = 120 WHERE id = 1")));
 * }</pre>
 */
public final class ChangeContextPlugin extends JdbiPlugin.Singleton {

    private final Supplier<ChangeContext> source;
    private final String settingsPrefix;

    private ChangeContextPlugin(Supplier<ChangeContext> source, String settingsPrefix) {
        this.source = Objects.requireNonNull(source, "source");
        this.settingsPrefix = Objects.requireNonNull(settingsPrefix, "settingsPrefix");
    }

    /** Reads {@link ChangeContext#current()}; settings prefix {@code tidemark}. */
    public static ChangeContextPlugin create() {
        return new ChangeContextPlugin(ChangeContext::current, TemporalTable.DEFAULT_SETTINGS_PREFIX);
    }

    /** Reads the context from {@code source} (a request scope, a security context, ...). */
    public static ChangeContextPlugin create(Supplier<ChangeContext> source, String settingsPrefix) {
        return new ChangeContextPlugin(source, settingsPrefix);
    }

    @Override
    public Connection customizeConnection(Connection connection) {
        return ContextualDataSource.wrap(connection, source, settingsPrefix);
    }
}
