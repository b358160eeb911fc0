package io.tidemark.sync;

import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** What one {@link SyncEngine#runOnce()} did, one {@link ObjectReport} per tracked object, in order. */
public final class SyncReport {

    private final Instant startedAt;
    private final Duration duration;
    private final Map<String, ObjectReport> reports;

    public SyncReport(Instant startedAt, Duration duration, List<ObjectReport> reports) {
        this.startedAt = startedAt;
        this.duration = duration;
        Map<String, ObjectReport> byName = new LinkedHashMap<>();
        reports.forEach(r -> byName.put(r.objectName(), r));
        this.reports = java.util.Collections.unmodifiableMap(byName);
    }

    public Instant startedAt() {
        return startedAt;
    }

    public Duration duration() {
        return duration;
    }

    public List<ObjectReport> objects() {
        return List.copyOf(reports.values());
    }

    public Optional<ObjectReport> object(String name) {
        return Optional.ofNullable(reports.get(name));
    }

    /** The report of one object; fails with {@link ErrorCode#UNKNOWN_OBJECT} if the cycle did not cover it. */
    public ObjectReport get(String name) {
        ObjectReport report = reports.get(name);
        if (report == null) {
            throw new TidemarkException(ErrorCode.UNKNOWN_OBJECT, "No report for tracked object '" + name
                    + "'; the report covers " + reports.keySet());
        }
        return report;
    }

    /** True when every object's cycle ended without failing or being blocked. */
    public boolean isSuccess() {
        return reports.values().stream().allMatch(ObjectReport::isSuccess);
    }

    @Override
    public String toString() {
        return "SyncReport" + reports.values();
    }
}
