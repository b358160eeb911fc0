package io.tidemark.history;

/** {@link ReferenceFixesContract} with row triggers. */
class RowReferenceFixesTest extends ReferenceFixesContract {

    RowReferenceFixesTest(io.tidemark.testing.TestDatabase db) {
        super(db);
    }

    @Override
    TriggerMode mode() {
        return TriggerMode.ROW;
    }
}
