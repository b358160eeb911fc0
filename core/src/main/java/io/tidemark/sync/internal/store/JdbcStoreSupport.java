package io.tidemark.sync.internal.store;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.JdbiException;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Objects;

/** What the JDBC stores share: the dialect, the JDBI handle factory, table creation and error wrapping. */
public final class JdbcStoreSupport {

    public static final String DEFAULT_SCHEMA = "tidemark";
    public static final String DEFAULT_STATE_TABLE = "sync_state";
    public static final String DEFAULT_DEAD_LETTER_TABLE = "dead_letters";

    private final Jdbi jdbi;
    private final StoreDialect dialect;

    public JdbcStoreSupport(DataSource dataSource, String schema, String stateTable, String deadLetterTable,
                            boolean createTables) {
        Objects.requireNonNull(dataSource, "dataSource");
        this.dialect = StoreDialect.detect(dataSource, schema, stateTable, deadLetterTable);
        this.jdbi = Jdbi.create(dataSource);
        if (createTables) {
            try (Connection c = dataSource.getConnection()) {
                dialect.createIfMissing(c);
            } catch (SQLException e) {
                throw new TidemarkException(ErrorCode.STORE_FAILED, "Could not create or upgrade the Tidemark store"
                        + " tables in schema '" + schema + "': " + e.getMessage() + ". Create or upgrade them with"
                        + " the script from script() and build the store with createTables(false).", e);
            }
        }
    }

    public Jdbi jdbi() {
        return jdbi;
    }

    public StoreDialect dialect() {
        return dialect;
    }

    /** Wraps a database failure of a store operation in a {@link TidemarkException} naming the object. */
    public static TidemarkException failure(String what, String objectName, JdbiException e) {
        return TidemarkException.forObject(ErrorCode.STORE_FAILED, objectName,
                "could not " + what + " in the Tidemark store: " + rootMessage(e), e);
    }

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t.getMessage();
    }
}
