package io.tidemark.history;

/** {@link TriggerSemanticsContract} with row triggers. */
class RowTriggerSemanticsTest extends TriggerSemanticsContract {

    RowTriggerSemanticsTest(javax.sql.DataSource ds) {
        super(ds);
    }

    @Override
    TriggerMode mode() {
        return TriggerMode.ROW;
    }
}
