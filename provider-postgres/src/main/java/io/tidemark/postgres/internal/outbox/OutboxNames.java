package io.tidemark.postgres.internal.outbox;

import io.tidemark.postgres.internal.FunctionNames;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.internal.sql.PgName;

/**
 * The names of everything an outbox generates for one table, each schema-qualified and checked against
 * PostgreSQL's 63-byte identifier limit up front (the server would silently truncate a longer one, and two
 * truncated names could collide).
 *
 * <p>Defaults for {@code public.items}: outbox {@code public.items_outbox}, and, named after the outbox,
 * {@code items_outbox_state}, {@code items_outbox_capture()},
 * {@code items_outbox_trim()}, the wake-up flag {@code items_outbox_wakeup} and {@code items_outbox_arm()}, the view
 * {@code items_outbox_columns}, the triggers
 * {@code items_outbox_insert|update|delete|truncate} and the primary key
 * {@code items_outbox_pkey}; the change function {@code public.items_changes(json)}. Earlier versions also made
 * {@code items_outbox_request(json)}, which install, upgrade and uninstall drop.
 */
public final class OutboxNames {

    private final PgName table;
    private final PgName outbox;
    private final PgName changeFunction;
    private final PgName state;
    private final PgName captureFunction;
    private final PgName trimFunction;
    private final PgName requestFunction;
    private final String primaryKey;
    private final String insertTrigger;
    private final String updateTrigger;
    private final PgName guardView;
    private final String deleteTrigger;
    private final String truncateTrigger;
    private final PgName wakeUp;
    private final PgName armFunction;

    private OutboxNames(PgName table, PgName outbox, PgName changeFunction) {
        this.table = table;
        this.outbox = outbox;
        this.changeFunction = changeFunction;
        String schema = outbox.schema().orElseThrow();
        String base = outbox.name();
        this.state = derived(schema, base, "_state");
        this.captureFunction = derived(schema, base, "_capture");
        this.trimFunction = derived(schema, base, "_trim");
        this.requestFunction = derived(schema, base, "_request");
        this.primaryKey = derivedPart(base, "_pkey");
        this.insertTrigger = derivedPart(base, "_insert");
        this.updateTrigger = derivedPart(base, "_update");
        this.guardView = derived(schema, base, "_columns");
        this.deleteTrigger = derivedPart(base, "_delete");
        this.truncateTrigger = derivedPart(base, "_truncate");
        this.wakeUp = derived(schema, base, "_wakeup");
        this.armFunction = derived(schema, base, "_arm");
    }

    /**
     * @param table          the tracked table; an unqualified name means schema {@code public}
     * @param outbox         the outbox table, or null for {@code <table>_outbox} in the table's schema
     * @param changeFunction the change function, or null for {@code <table>_changes} in the table's schema
     */
    public static OutboxNames of(String table, String outbox, String changeFunction) {
        PgName t = PgName.parse(table, "table").withDefaultSchema("public");
        String schema = t.schema().orElseThrow();
        PgName o = outbox == null ? derived(schema, t.name(), "_outbox")
                : PgName.parse(outbox, "outbox table").withDefaultSchema(schema);
        PgName f = changeFunction == null ? derived(schema, t.name(), "_changes")
                : PgName.parse(changeFunction, "change function").withDefaultSchema(schema);
        if (o.equals(t)) {
            throw new TidemarkException(ErrorCode.INVALID_CONFIGURATION,
                    "The outbox table cannot be the tracked table itself (" + t + ")");
        }
        return new OutboxNames(t, o, f);
    }

    private static PgName derived(String schema, String base, String suffix) {
        return PgName.of(schema, derivedPart(base, suffix));
    }

    private static String derivedPart(String base, String suffix) {
        String name = base + suffix;
        try {
            return PgName.checkPart(name, "generated");
        } catch (TidemarkException e) {
            throw new TidemarkException(ErrorCode.INVALID_IDENTIFIER, e.getMessage() + ". It is derived from \""
                    + base + "\"; give the outbox table (and, if needed, the change function) a shorter name"
                    + " with PostgresOutbox.Builder.outboxTable(...) / changeFunction(...).", e);
        }
    }

    public PgName table() {
        return table;
    }

    /** The tracked table as users write it: schema-qualified, quoted where needed ({@code public.items}). */
    public String tableText() {
        return FunctionNames.text(table);
    }

    public PgName outbox() {
        return outbox;
    }

    public PgName changeFunction() {
        return changeFunction;
    }

    public PgName state() {
        return state;
    }

    public PgName captureFunction() {
        return captureFunction;
    }

    public PgName trimFunction() {
        return trimFunction;
    }

    /**
     * The function that checked a request for the change function in outboxes of earlier versions: dropped by the
     * script and by uninstall, and how their change functions are recognised.
     */
    public PgName requestFunction() {
        return requestFunction;
    }

    public String primaryKey() {
        return primaryKey;
    }

    public String insertTrigger() {
        return insertTrigger;
    }

    public String updateTrigger() {
        return updateTrigger;
    }

    /** A view over the captured columns, so that PostgreSQL refuses to drop one of them while it is captured. */
    public PgName guardView() {
        return guardView;
    }

    public String deleteTrigger() {
        return deleteTrigger;
    }

    public String truncateTrigger() {
        return truncateTrigger;
    }

    /** The one-row flag that says whether a reader waits for a notification (wake-ups on only). */
    public PgName wakeUp() {
        return wakeUp;
    }

    /** Sets the wake-up flag: a reader calls it when a read found nothing new, before it waits. */
    public PgName armFunction() {
        return armFunction;
    }
}
