package io.tidemark.history;

/** {@link StressContract} with row triggers. */
class RowStressTest extends StressContract {

    @Override
    TriggerMode mode() {
        return TriggerMode.ROW;
    }
}
