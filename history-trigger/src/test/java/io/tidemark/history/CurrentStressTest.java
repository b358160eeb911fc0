package io.tidemark.history;

/** {@link StressContract} with the current version kept in the table (row triggers). */
class CurrentStressTest extends StressContract {

    @Override
    TriggerMode mode() {
        return TriggerMode.ROW;
    }

    @Override
    HistoryStorage storage() {
        return HistoryStorage.CURRENT_IN_TABLE;
    }
}
