package io.tidemark.history;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;

import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * What {@link TemporalTable#verify} found, or, from {@link TemporalTable#evolve}, what was found and what was done
 * about it.
 */
public final class VerifyReport {

    private final String table;
    private final List<Drift> drifts;
    private final List<String> actions;

    public VerifyReport(String table, List<Drift> drifts, List<String> actions) {
        this.table = Objects.requireNonNull(table, "table");
        this.drifts = List.copyOf(drifts);
        this.actions = List.copyOf(actions);
    }

    /** The differences found (before any repair). */
    public List<Drift> drifts() {
        return drifts;
    }

    /** What evolve did, one line each ("added column history.x", "regenerated function ..."); empty for verify. */
    public List<String> actions() {
        return actions;
    }

    public boolean isClean() {
        return drifts.isEmpty();
    }

    public boolean has(Drift.Kind kind) {
        return drifts.stream().anyMatch(d -> d.kind() == kind);
    }

    /** @throws TidemarkException SCHEMA_DRIFT listing every difference, when there is any */
    public VerifyReport assertClean() {
        if (!drifts.isEmpty()) {
            throw TidemarkException.forObject(ErrorCode.SCHEMA_DRIFT, table, "installed history differs from the"
                    + " configuration: " + drifts.stream().map(Drift::toString).collect(Collectors.joining("; "))
                    + ". Run TemporalTable.evolve(dataSource) to repair it.");
        }
        return this;
    }

    @Override
    public String toString() {
        return "VerifyReport[" + table + ", drifts=" + drifts + ", actions=" + actions + "]";
    }
}
