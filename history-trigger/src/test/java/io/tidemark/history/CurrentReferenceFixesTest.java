package io.tidemark.history;

/** {@link ReferenceFixesContract} with the current version kept in the table (row triggers). */
class CurrentReferenceFixesTest extends ReferenceFixesContract {

    CurrentReferenceFixesTest(io.tidemark.testing.TestDatabase db) {
        super(db);
    }

    @Override
    TriggerMode mode() {
        return TriggerMode.ROW;
    }

    @Override
    HistoryStorage storage() {
        return HistoryStorage.CURRENT_IN_TABLE;
    }
}
