package io.tidemark.history;

/** {@link ReferenceFixesContract} with the current version kept in the table (DELETE archived per statement). */
class CurrentStatementReferenceFixesTest extends ReferenceFixesContract {

    CurrentStatementReferenceFixesTest(io.tidemark.testing.TestDatabase db) {
        super(db);
    }

    @Override
    TriggerMode mode() {
        return TriggerMode.STATEMENT;
    }

    @Override
    HistoryStorage storage() {
        return HistoryStorage.CURRENT_IN_TABLE;
    }
}
