package io.tidemark.sync;

import java.util.List;
import java.util.Objects;

/**
 * What {@link SyncEngine#check()} found wrong before any cycle ran: every problem at once, each with the
 * component or tracked object it concerns, its error code and what to do. Empty when the provider and the stores
 * are reachable and every tracked procedure exists with the contract's signature.
 */
public final class CheckReport {

    /**
     * One thing that would make cycles fail.
     *
     * @param subject the tracked object's name, or the component ({@code "provider postgres"},
     *                {@code "watermark store"}, {@code "dead-letter store"})
     * @param code    the error code a cycle would fail with
     * @param message what is wrong and what to do
     */
    public record Problem(String subject, ErrorCode code, String message) {

        public Problem {
            Objects.requireNonNull(subject, "subject");
            Objects.requireNonNull(code, "code");
            Objects.requireNonNull(message, "message");
        }

        @Override
        public String toString() {
            return "[" + subject + "] " + code + ": " + message;
        }
    }

    private final List<Problem> problems;

    public CheckReport(List<Problem> problems) {
        this.problems = List.copyOf(problems);
    }

    public List<Problem> problems() {
        return problems;
    }

    /** True when nothing is wrong. */
    public boolean isOk() {
        return problems.isEmpty();
    }

    /**
     * Throws one {@link TidemarkException} ({@link ErrorCode#CHECK_FAILED}) whose message lists every problem,
     * one per line; returns quietly when there is none.
     */
    public void throwIfProblems(String engineName) {
        if (!problems.isEmpty()) {
            throw new TidemarkException(ErrorCode.CHECK_FAILED, "The engine '" + engineName + "' found "
                    + problems.size() + (problems.size() == 1 ? " problem" : " problems") + " at its start-up check:"
                    + describe());
        }
    }

    private String describe() {
        StringBuilder text = new StringBuilder();
        problems.forEach(p -> text.append("\n  - ").append(p));
        return text.toString();
    }

    @Override
    public String toString() {
        return problems.isEmpty() ? "CheckReport[ok]" : "CheckReport[" + problems.size() + " problems:" + describe() + "]";
    }
}
