package io.tidemark.testing;

import io.tidemark.sync.internal.config.Checks;
import io.tidemark.sync.internal.sql.PgName;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.ChangeProvider;
import io.tidemark.testing.internal.ContractScenarios;
import io.tidemark.testing.internal.ContractTarget;
import io.tidemark.testing.internal.FunctionTarget;
import io.tidemark.testing.internal.ProviderTarget;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Checks a PostgreSQL change function against the procedure contract, on a real database: it writes rows through
 * the actions you give it, on real connections and in exactly the interleavings that break unsafe functions
 * (driven step by step, no timing involved), reads the function the way the engine does, and reports a verdict per
 * scenario. Run it against a test database: it writes rows with keys it generates, and deletes them at the end.
 *
 * <pre>{@code
 * @Test
 * void my_change_function_is_safe(DataSource dataSource) {
 *     ProcedureContractVerifier.forFunction(dataSource, "public.get_item_changes")
 *             .keyField("ItemCode")                    // the JSON key that carries the row's key
 *             .insert("INSERT INTO items (item_code, description, price) VALUES (?, 'new', 1)")
 *             .update("UPDATE items SET price = price + 1 WHERE item_code = ?")
 *             .clear("UPDATE items SET description = NULL WHERE item_code = ?", "Description")
 *             .delete("DELETE FROM items WHERE item_code = ?")
 *             .verify()
 *             .assertSafe();
 * }
 * }</pre>
 *
 * <p>The scenarios: every answer carries {@code Metadata.Sync.Version}; an insert, update and delete come in order
 * with versions; a delete is reported; a column cleared to NULL is distinguishable from an untouched one; seed
 * returns no rows and a version from which nothing is missed; the stored version never goes down; the in-flight
 * interleaving of docs/contract.md#the-in-flight-transaction-gap loses nothing; changes of one row come in commit order even when transaction ids do
 * not; paging with {@code maxRows} loses nothing.
 */
public final class ProcedureContractVerifier {

    /** Writes one row of the tracked table; {@code key} is the key the verifier chose for it. */
    @FunctionalInterface
    public interface RowAction {
        void apply(Connection connection, Object key) throws SQLException;
    }

    private final ContractScenarios.Setup setup;

    private ProcedureContractVerifier(ContractScenarios.Setup setup) {
        this.setup = setup;
    }

    /**
     * @param function the change function, optionally schema-qualified, as a tracked object names it
     */
    public static Builder forFunction(DataSource dataSource, String function) {
        return new Builder(dataSource, function, false, null, null);
    }

    /**
     * The same scenarios against a provider's object, read through {@code ChangeProvider.invoke} as the engine reads
     * it: for a capture without a change function (the log-based {@code PostgresLogicalProvider}), or to check a
     * provider end to end. The rows are still written through {@code dataSource}. A provider that learns of commits
     * asynchronously needs {@link Builder#beforeEachRead}.
     *
     * <pre>{@code
     * ProcedureContractVerifier.forProvider(dataSource, provider, capture.track("Items", "public.items"))
     *         .beforeEachRead(() -> provider.awaitCaughtUp(Duration.ofSeconds(10)))
     *         .keyField("item_code") ... .verify().assertSafe();
     * }</pre>
     */
    public static Builder forProvider(DataSource dataSource, ChangeProvider provider, TrackedObject object) {
        return new Builder(dataSource, null, true, provider, object);
    }

    /** Runs every scenario. Each call writes new rows. */
    public ContractReport verify() {
        return new ContractReport(setup.function(), new ContractScenarios(setup).run());
    }

    /** Configures a verification; checked at {@link #build()}. */
    public static final class Builder {
        private final DataSource dataSource;
        private final String function;
        private String keyField;
        private String clearedField;
        private RowAction insert;
        private RowAction update;
        private RowAction clear;
        private RowAction delete;
        private Supplier<?> keys;
        private Duration timeout = Duration.ofSeconds(30);
        private boolean netChanges;
        /** Read through a provider ({@link #forProvider}) rather than a function. */
        private final boolean throughProvider;
        private final ChangeProvider provider;
        private final TrackedObject object;
        private Runnable beforeEachRead = () -> { };

        private Builder(DataSource dataSource, String function, boolean throughProvider, ChangeProvider provider,
                        TrackedObject object) {
            this.dataSource = dataSource;
            this.function = function;
            this.throughProvider = throughProvider;
            this.provider = provider;
            this.object = object;
        }

        /**
         * Runs before every read of a provider ({@link #forProvider}): for one that learns of commits asynchronously,
         * what waits until it has seen every commit so far, so that each step of a scenario reads what the steps
         * before it committed ({@code PostgresLogicalProvider::awaitCaughtUp}). Default: nothing.
         */
        public Builder beforeEachRead(Runnable action) {
            this.beforeEachRead = action;
            return this;
        }

        /** The JSON key of a change that carries the row's key (as the function names it, {@code "ItemCode"}). */
        public Builder keyField(String field) {
            this.keyField = field;
            return this;
        }

        /** Inserts a row with the given key, with a non-NULL value in the column {@link #clear} empties. */
        public Builder insert(RowAction action) {
            this.insert = action;
            return this;
        }

        /** {@link #insert(RowAction)} as SQL with one parameter, the key. */
        public Builder insert(String sql) {
            return insert(sql(sql));
        }

        /** Changes the row with the given key, leaving the column {@link #clear} empties untouched. */
        public Builder update(RowAction action) {
            this.update = action;
            return this;
        }

        public Builder update(String sql) {
            return update(sql(sql));
        }

        /**
         * Sets one column of the row with the given key to NULL.
         *
         * @param field the JSON key under which the function reports that column
         */
        public Builder clear(RowAction action, String field) {
            this.clear = action;
            this.clearedField = field;
            return this;
        }

        public Builder clear(String sql, String field) {
            return clear(sql(sql), field);
        }

        /** Deletes the row with the given key. */
        public Builder delete(RowAction action) {
            this.delete = action;
            return this;
        }

        public Builder delete(String sql) {
            return delete(sql(sql));
        }

        /**
         * Where new keys come from; each call must give a key no row has. Default: text keys unique to the run
         * ({@code cv-<run>-<n>}). Give numbers for a numeric key.
         */
        public Builder keys(Supplier<?> keys) {
            this.keys = keys;
            return this;
        }

        /**
         * The function returns one net change per key per read, with the row as it is when read (as SQL Server
         * Change Tracking does, and the PostgreSQL outbox with {@code CaptureShape.KEYS}): several writes of one
         * key between two reads are one change. The scenarios that follow a key through several writes then read
         * after each write, and the one whose writes cannot be told apart by a read (a delete and an insert
         * committed between two reads) checks that what is delivered ends with the row existing. A consumer of net
         * changes applies I and U as upserts and ignores a D of a key it does not hold (docs/contract.md, "Net
         * changes"), so an update must also carry the whole row, as the insert does. Every other check is the
         * same. Default: off, every change is expected.
         */
        public Builder netChanges() {
            this.netChanges = true;
            return this;
        }

        /** How long one statement may take before the scenario gives up on it; default 30 seconds. */
        public Builder timeout(Duration timeout) {
            this.timeout = timeout;
            return this;
        }

        /** Checks every value at once (setters only store) and builds the verifier; runs no SQL. */
        public ProcedureContractVerifier build() {
            Checks checks = Checks.of("ProcedureContractVerifier");
            checks.notNull("dataSource", dataSource);
            if (throughProvider) {
                checks.notNull("provider", provider);
                checks.notNull("object", object);
                checks.notNull("beforeEachRead", beforeEachRead);
            } else {
                checks.valid(() -> PgName.parse(function, "function"));
            }
            require(checks, keyField, "keyField(...): the JSON key carrying the row's key");
            require(checks, insert, "insert(...)");
            require(checks, update, "update(...)");
            require(checks, clear, "clear(..., field)");
            require(checks, clearedField, "clear(..., field): the JSON key of the cleared column");
            require(checks, delete, "delete(...)");
            checks.commandTimeout("timeout", timeout);
            checks.throwIfAny();
            Supplier<?> keySource = keys != null ? keys : defaultKeys();
            int seconds = (int) timeout.toSeconds();
            String name;
            Supplier<ContractTarget> target;
            if (!throughProvider) {
                name = function;
                target = () -> new FunctionTarget(dataSource, function, seconds);
            } else {
                name = ProviderTarget.name(provider, object);
                Runnable settle = beforeEachRead;
                target = () -> new ProviderTarget(provider, object, settle);
            }
            return new ProcedureContractVerifier(new ContractScenarios.Setup(dataSource, name, target, keyField,
                    clearedField, insert, update, clear, delete, keySource, seconds, netChanges));
        }

        /** Builds and runs. */
        public ContractReport verify() {
            return build().verify();
        }

        private static void require(Checks checks, Object value, String what) {
            checks.that(value != null && !(value instanceof String && ((String) value).isBlank()), "needs " + what);
        }

        private static Supplier<String> defaultKeys() {
            String run = UUID.randomUUID().toString().substring(0, 8);
            AtomicLong next = new AtomicLong();
            return () -> "cv-" + run + "-" + next.incrementAndGet();
        }

        /** The statement as an action; null stays null, for {@link #build()} to report. */
        private static RowAction sql(String sql) {
            if (sql == null) {
                return null;
            }
            return (connection, key) -> {
                try (PreparedStatement s = connection.prepareStatement(sql)) {
                    s.setObject(1, key);
                    s.execute();
                }
            };
        }
    }
}
