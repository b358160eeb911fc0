package io.tidemark.history;

/** {@link StressContract} with the current version kept in the table (DELETE archived per statement). */
class CurrentStatementStressTest extends StressContract {

    @Override
    TriggerMode mode() {
        return TriggerMode.STATEMENT;
    }

    @Override
    HistoryStorage storage() {
        return HistoryStorage.CURRENT_IN_TABLE;
    }
}
