package io.tidemark.sqlserver;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;

import java.util.List;
import java.util.stream.Collectors;

/**
 * What {@link SqlServerProvider#preflight} found, in the order it checked: the database first, then each tracked
 * object. Print it, or let {@link #throwIfFailed()} stop an application whose database is not ready.
 */
public final class PreflightReport {

    private final List<PreflightCheck> checks;

    public PreflightReport(List<PreflightCheck> checks) {
        this.checks = List.copyOf(checks);
    }

    public List<PreflightCheck> checks() {
        return checks;
    }

    /** True when nothing failed (warnings allowed). */
    public boolean isOk() {
        return failures().isEmpty();
    }

    public List<PreflightCheck> failures() {
        return withStatus(PreflightCheck.Status.FAILED);
    }

    public List<PreflightCheck> warnings() {
        return withStatus(PreflightCheck.Status.WARNING);
    }

    /** The checks about one tracked object. */
    public List<PreflightCheck> forObject(String objectName) {
        return checks.stream().filter(c -> c.objectName().map(objectName::equals).orElse(false))
                .collect(Collectors.toUnmodifiableList());
    }

    /**
     * Throws when a check failed, with the error code of the first failure and every failure in the message.
     *
     * @return this report, when nothing failed
     */
    public PreflightReport throwIfFailed() {
        List<PreflightCheck> failed = failures();
        if (failed.isEmpty()) {
            return this;
        }
        ErrorCode code = failed.get(0).code().orElse(ErrorCode.INVALID_CONFIGURATION);
        throw new TidemarkException(code, "SQL Server preflight found " + failed.size() + " problem"
                + (failed.size() == 1 ? "" : "s") + ":\n" + failed.stream().map(c -> "  " + c)
                .collect(Collectors.joining("\n")));
    }

    private List<PreflightCheck> withStatus(PreflightCheck.Status status) {
        return checks.stream().filter(c -> c.status() == status).collect(Collectors.toUnmodifiableList());
    }

    /** One line per check, for logs. */
    @Override
    public String toString() {
        return "SQL Server preflight: " + (isOk() ? "ready" : failures().size() + " failed") + ", "
                + warnings().size() + " warning" + (warnings().size() == 1 ? "" : "s") + "\n"
                + checks.stream().map(c -> "  " + c).collect(Collectors.joining("\n"));
    }
}
