package io.tidemark.history;

/** {@link ReferenceFixesContract} with statement triggers. */
class StatementReferenceFixesTest extends ReferenceFixesContract {

    StatementReferenceFixesTest(io.tidemark.testing.TestDatabase db) {
        super(db);
    }

    @Override
    TriggerMode mode() {
        return TriggerMode.STATEMENT;
    }
}
