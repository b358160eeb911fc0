package io.tidemark.sync;

import io.tidemark.sync.internal.store.JdbcStoreSupport;
import io.tidemark.sync.spi.DeadLetter;
import io.tidemark.sync.spi.DeadLetterStore;
import org.jdbi.v3.core.JdbiException;
import org.jdbi.v3.core.mapper.RowMapper;

import javax.sql.DataSource;
import java.time.OffsetDateTime;
import java.util.List;

/**
 * Keeps dead letters in a table ({@code tidemark.dead_letters} by default), next to the watermarks. Each page
 * is stored with its changes as JSON, the error, and the versions it belonged to, so it can be inspected and
 * replayed by hand.
 */
public final class JdbcDeadLetterStore implements DeadLetterStore {

    private static final RowMapper<DeadLetter> LETTER = (rs, ctx) -> new DeadLetter(
            rs.getLong("id"), rs.getString("object_name"), rs.getString("destination"), rs.getString("batch_id"),
            rs.getInt("page_number"), rs.getLong("from_version"), rs.getLong("to_version"),
            SyncType.valueOf(rs.getString("sync_type")), rs.getInt("reason_code"), rs.getInt("change_count"),
            rs.getString("changes"), rs.getString("error"),
            rs.getObject("created_at", OffsetDateTime.class).toInstant());

    private final JdbcStoreSupport support;

    private JdbcDeadLetterStore(JdbcStoreSupport support) {
        this.support = support;
    }

    public static JdbcDeadLetterStore create(DataSource dataSource) {
        return builder(dataSource).build();
    }

    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    /** The DDL of the store's tables, formatted for review. */
    public String script() {
        return support.dialect().createScript();
    }

    /** Connects and reads the table: a closed port is {@code CONNECTION_FAILED}, a missing table {@code STORE_FAILED}. */
    @Override
    public List<CheckReport.Problem> check() {
        return support.check("dead-letter store", support.dialect().selectDeadLetters());
    }

    @Override
    public DeadLetter add(DeadLetter letter) {
        try {
            long id = support.jdbi().withHandle(h -> h.createUpdate(support.dialect().insertDeadLetter())
                    .bind("objectName", letter.objectName())
                    .bind("destination", letter.destination())
                    .bind("batchId", letter.batchId())
                    .bind("pageNumber", letter.pageNumber())
                    .bind("fromVersion", letter.fromVersion())
                    .bind("toVersion", letter.toVersion())
                    .bind("syncType", letter.syncType().name())
                    .bind("reasonCode", letter.reasonCode())
                    .bind("changeCount", letter.changeCount())
                    .bind("changes", letter.changesJson())
                    .bind("error", letter.error())
                    .bind("createdAt", JdbcWatermarkStore.timestamp(letter.createdAt()))
                    .executeAndReturnGeneratedKeys("id")
                    .mapTo(Long.class)
                    .one());
            return letter.withId(id);
        } catch (JdbiException e) {
            throw support.failure("store a dead letter for destination '" + letter.destination() + "'",
                    letter.objectName(), e);
        }
    }

    @Override
    public List<DeadLetter> list(String objectName) {
        try {
            return support.jdbi().withHandle(h -> h.createQuery(support.dialect().selectDeadLetters())
                    .bind("name", objectName)
                    .map(LETTER)
                    .list());
        } catch (JdbiException e) {
            throw support.failure("read dead letters", objectName, e);
        }
    }

    @Override
    public boolean delete(long id) {
        try {
            return support.jdbi().withHandle(h -> h.createUpdate(support.dialect().deleteDeadLetter())
                    .bind("id", id).execute()) == 1;
        } catch (JdbiException e) {
            throw support.failure("delete dead letter " + id, "*", e);
        }
    }

    /** Configures a {@link JdbcDeadLetterStore}. */
    public static final class Builder {
        private final DataSource dataSource;
        private String schema = JdbcStoreSupport.DEFAULT_SCHEMA;
        private String stateTable = JdbcStoreSupport.DEFAULT_STATE_TABLE;
        private String table = JdbcStoreSupport.DEFAULT_DEAD_LETTER_TABLE;
        private boolean createTables = true;

        private Builder(DataSource dataSource) {
            this.dataSource = dataSource;
        }

        public Builder schema(String schema) {
            this.schema = schema;
            return this;
        }

        /** The dead-letter table; default {@code dead_letters}. */
        public Builder table(String table) {
            this.table = table;
            return this;
        }

        /** The watermark table created next to it; default {@code sync_state}. */
        public Builder stateTable(String table) {
            this.stateTable = table;
            return this;
        }

        public Builder createTables(boolean createTables) {
            this.createTables = createTables;
            return this;
        }

        public JdbcDeadLetterStore build() {
            return new JdbcDeadLetterStore(new JdbcStoreSupport("JdbcDeadLetterStore", dataSource, schema, stateTable,
                    table, createTables));
        }
    }
}
