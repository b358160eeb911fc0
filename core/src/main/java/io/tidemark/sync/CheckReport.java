package io.tidemark.sync;

import java.util.List;
import java.util.Objects;

/**
 * What {@link SyncEngine#check()} found wrong before any cycle ran: every problem at once, each with the
 * component or tracked object it concerns, its error code and what to do. Empty when the provider and the stores
 * are reachable and every tracked procedure exists with the contract's signature.
 */
public final class CheckReport {

    /** One thing that would make cycles fail. */
    public static final class Problem {
        private final String subject;
        private final ErrorCode code;
        private final String message;

        /**
         * @param subject the tracked object's name, or the component ({@code "provider postgres"},
         *                {@code "watermark store"}, {@code "dead-letter store"})
         */
        public Problem(String subject, ErrorCode code, String message) {
            this.subject = Objects.requireNonNull(subject, "subject");
            this.code = Objects.requireNonNull(code, "code");
            this.message = Objects.requireNonNull(message, "message");
        }

        public String subject() {
            return subject;
        }

        public ErrorCode code() {
            return code;
        }

        public String message() {
            return message;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Problem p && subject.equals(p.subject) && code == p.code && message.equals(p.message);
        }

        @Override
        public int hashCode() {
            return Objects.hash(subject, code, message);
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
