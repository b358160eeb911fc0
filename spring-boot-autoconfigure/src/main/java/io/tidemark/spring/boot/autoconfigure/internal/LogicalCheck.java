package io.tidemark.spring.boot.autoconfigure.internal;

import io.tidemark.spring.boot.autoconfigure.TidemarkProperties.Logical;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.internal.sql.PgName;
import org.springframework.util.unit.DataSize;

import java.util.regex.Pattern;

/**
 * The checks of {@code tidemark.logical.*}, with the other properties' in {@link EngineAssembler#check}. The
 * provider's builders check the same values, but their messages name builder methods; these name the properties.
 */
final class LogicalCheck {

    /** PostgreSQL folds a replication command's names, so the capture accepts only what survives the folding. */
    private static final Pattern NAME = Pattern.compile("[a-z0-9_]{1,63}");

    private static final int MIN_CHANGES = 1_000;

    private LogicalCheck() {
    }

    /** A table name the capture can use: one or two identifiers, as PostgresLogicalCapture parses it. */
    static void checkTable(Violations v, String property, String table) {
        try {
            PgName.parse(table, "table");
        } catch (TidemarkException e) {
            v.add(property, "is not a table name (" + e.getMessage() + ")");
        }
    }

    /**
     * @param login       the replication connection, tidemark.logical.* over spring.datasource.*
     * @param coordinated whether tidemark.coordination.enabled
     */
    static void check(Violations v, Logical logical, JdbcLogin login, boolean coordinated) {
        // An object's stored watermark names the slot it came from: a lease moving the object to an instance
        // streaming another slot would be refused (WATERMARK_SOURCE_CHANGED), and one slot streams to one instance.
        v.require(!coordinated, "tidemark.coordination.enabled", "must be false with tidemark.provider="
                + "postgres-logical: a replication slot streams to one instance at a time, and an object's watermark"
                + " belongs to its slot, so objects cannot move between instances; run the log-based capture on one"
                + " instance");
        v.require(logical.getSlot() != null && NAME.matcher(logical.getSlot()).matches(), "tidemark.logical.slot",
                "must be 1 to 63 lower-case letters, digits and underscores (was " + logical.getSlot() + ")");
        v.require(logical.getPublication() == null || NAME.matcher(logical.getPublication()).matches(),
                "tidemark.logical.publication", "must be 1 to 63 lower-case letters, digits and underscores (was "
                        + logical.getPublication() + "); leave it unset for the slot's name");
        if (login.url() == null || login.url().isBlank()) {
            v.add("tidemark.logical.url", "required with tidemark.provider=postgres-logical: the JDBC URL of the"
                    + " replication connection; it defaults to spring.datasource.url, which the application does not"
                    + " set");
        } else {
            // Not the URL itself in the message: it may carry a password.
            v.require(login.url().startsWith("jdbc:postgresql:"), "tidemark.logical.url",
                    "must be a jdbc:postgresql: URL" + (logical.getUrl() == null
                            ? " (it defaults to spring.datasource.url, which is another database's)" : ""));
        }
        v.positive("tidemark.logical.acknowledge-every", logical.getAcknowledgeEvery());
        v.positive("tidemark.logical.status-interval", logical.getStatusInterval());
        v.positive("tidemark.logical.slot-lag-check-interval", logical.getSlotLagCheckInterval());
        v.require(logical.getReadInterval() != null && !logical.getReadInterval().isNegative(),
                "tidemark.logical.read-interval", "must be zero or a positive duration such as 6ms (was "
                        + logical.getReadInterval() + ")");
        atLeastThousand(v, "tidemark.logical.max-buffered-changes", logical.getMaxBufferedChanges());
        atLeastThousand(v, "tidemark.logical.max-transaction-changes", logical.getMaxTransactionChanges());
        atLeastOneMegabyte(v, "tidemark.logical.max-buffered-bytes", logical.getMaxBufferedBytes());
        atLeastOneMegabyte(v, "tidemark.logical.max-transaction-bytes", logical.getMaxTransactionBytes());
        v.require(logical.getSlotLagWarning() != null && !logical.getSlotLagWarning().isNegative(),
                "tidemark.logical.slot-lag-warning", "must be zero or a size such as 512MB or 1GB (was "
                        + logical.getSlotLagWarning() + ")");
    }

    private static void atLeastThousand(Violations v, String property, int changes) {
        v.require(changes >= MIN_CHANGES, property, "must be at least " + MIN_CHANGES + " (was " + changes + ")");
    }

    private static void atLeastOneMegabyte(Violations v, String property, DataSize size) {
        v.require(size != null && size.compareTo(DataSize.ofMegabytes(1)) >= 0, property,
                "must be at least 1MB (was " + (size == null ? null : size.toBytes() + " bytes") + ")");
    }
}
