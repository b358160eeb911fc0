package io.tidemark.history;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.internal.config.Checks;

import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Who changed the data and why: the values the history trigger writes into {@code changed_by},
 * {@code changed_by_name}, {@code correlation_id}, {@code reason} and {@code extra}.
 *
 * <p>Immutable. The trigger cannot see the application, so the context travels to it as transaction-local settings
 * ({@code set_config('<prefix>.changed_by', ..., true)}); {@link ContextualDataSource} and the JDBI
 * {@link io.tidemark.history.jdbi.ChangeContextPlugin} send them in the same round trip as the statement that
 * writes. An absent value is written as NULL.
 *
 * <p>{@link #runWith(ChangeContext, Runnable)} binds a context to the current thread for one unit of work;
 * {@link #current()} is what the integrations read by default.
 */
public final class ChangeContext {

    /** The context with every value absent: the trigger writes NULL into every context column. */
    public static final ChangeContext EMPTY = new ChangeContext(null, null, null, null, null);

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final ThreadLocal<ChangeContext> CURRENT = new ThreadLocal<>();

    private final String changedBy;
    private final String changedByName;
    private final String correlationId;
    private final String reason;
    private final String extra;

    private ChangeContext(String changedBy, String changedByName, String correlationId, String reason, String extra) {
        this.changedBy = changedBy;
        this.changedByName = changedByName;
        this.correlationId = correlationId;
        this.reason = reason;
        this.extra = extra;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A context naming only who made the change. */
    public static ChangeContext changedBy(String changedBy) {
        return builder().changedBy(changedBy).build();
    }

    /** The context bound to this thread by {@link #runWith}, or {@link #EMPTY}. */
    public static ChangeContext current() {
        ChangeContext context = CURRENT.get();
        return context == null ? EMPTY : context;
    }

    /** Runs {@code work} with {@code context} bound to this thread, restoring what was bound before. */
    public static void runWith(ChangeContext context, Runnable work) {
        callWith(context, () -> {
            work.run();
            return null;
        });
    }

    /** Calls {@code work} with {@code context} bound to this thread, restoring what was bound before. */
    public static <T> T callWith(ChangeContext context, Supplier<T> work) {
        Objects.requireNonNull(context, "context");
        ChangeContext previous = CURRENT.get();
        CURRENT.set(context);
        try {
            return work.get();
        } finally {
            if (previous == null) {
                CURRENT.remove();
            } else {
                CURRENT.set(previous);
            }
        }
    }

    public Optional<String> changedBy() {
        return Optional.ofNullable(changedBy);
    }

    public Optional<String> changedByName() {
        return Optional.ofNullable(changedByName);
    }

    public Optional<String> correlationId() {
        return Optional.ofNullable(correlationId);
    }

    public Optional<String> reason() {
        return Optional.ofNullable(reason);
    }

    /** The extra JSON object, as text; validated when the context was built. */
    public Optional<String> extra() {
        return Optional.ofNullable(extra);
    }

    /** True when every value is absent. */
    public boolean isEmpty() {
        return changedBy == null && changedByName == null && correlationId == null && reason == null && extra == null;
    }

    /** A builder starting from this context's values. */
    public Builder toBuilder() {
        return new Builder().changedBy(changedBy).changedByName(changedByName).correlationId(correlationId)
                .reason(reason).extraJson(extra);
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof ChangeContext)) {
            return false;
        }
        ChangeContext that = (ChangeContext) o;
        return Objects.equals(changedBy, that.changedBy) && Objects.equals(changedByName, that.changedByName)
                && Objects.equals(correlationId, that.correlationId) && Objects.equals(reason, that.reason)
                && Objects.equals(extra, that.extra);
    }

    @Override
    public int hashCode() {
        return Objects.hash(changedBy, changedByName, correlationId, reason, extra);
    }

    @Override
    public String toString() {
        return "ChangeContext[changedBy=" + changedBy + ", changedByName=" + changedByName + ", correlationId="
                + correlationId + ", reason=" + reason + ", extra=" + extra + "]";
    }

    /** Builds a {@link ChangeContext}. Empty strings count as absent, because the trigger reads '' as NULL. */
    public static final class Builder {
        private String changedBy;
        private String changedByName;
        private String correlationId;
        private String reason;
        private String extra;

        private Builder() {
        }

        public Builder changedBy(String value) {
            this.changedBy = value;
            return this;
        }

        public Builder changedByName(String value) {
            this.changedByName = value;
            return this;
        }

        public Builder correlationId(String value) {
            this.correlationId = value;
            return this;
        }

        public Builder reason(String value) {
            this.reason = value;
            return this;
        }

        /** Extra data as a JSON object, e.g. {@code {"ticket":"OPS-12"}}; checked at {@link #build()}. */
        public Builder extraJson(String json) {
            this.extra = json;
            return this;
        }

        /**
         * Checks every value at once (setters only store).
         *
         * @throws TidemarkException INVALID_CONFIGURATION listing every value that contains a NUL character
         *                           (PostgreSQL text cannot hold one), and {@code extra} unless it is a JSON object
         */
        public ChangeContext build() {
            Checks checks = Checks.of("ChangeContext");
            String by = clean(checks, "changedBy", changedBy);
            String byName = clean(checks, "changedByName", changedByName);
            String correlation = clean(checks, "correlationId", correlationId);
            String why = clean(checks, "reason", reason);
            String json = clean(checks, "extra", extra);
            if (json != null) {
                json = validateObject(checks, json);
            }
            checks.throwIfAny();
            return new ChangeContext(by, byName, correlation, why, json);
        }

        private static String clean(Checks checks, String what, String value) {
            if (value == null || value.isEmpty()) {
                return null;
            }
            if (value.indexOf('\0') >= 0) {
                checks.add("ChangeContext." + what + " contains a NUL character, which PostgreSQL text cannot store;"
                        + " remove it");
                return null;
            }
            return value;
        }

        private static String validateObject(Checks checks, String json) {
            JsonNode node;
            try {
                node = JSON.readTree(json);
            } catch (JsonProcessingException e) {
                checks.add("ChangeContext.extra is not valid JSON (" + e.getOriginalMessage() + "); pass a JSON"
                        + " object such as {\"ticket\":\"OPS-12\"}");
                return null;
            }
            if (node == null || !node.isObject()) {
                checks.add("ChangeContext.extra must be a JSON object, not "
                        + (node == null ? "nothing" : node.getNodeType().toString().toLowerCase(java.util.Locale.ROOT))
                        + "; wrap the value, e.g. {\"value\": ...}");
                return null;
            }
            // Normalised text: what jsonb will store anyway, and stable for equals().
            return node.toString();
        }
    }
}
