package io.tidemark.history;

/** {@link StressContract} with statement triggers. */
class StatementStressTest extends StressContract {

    @Override
    TriggerMode mode() {
        return TriggerMode.STATEMENT;
    }
}
