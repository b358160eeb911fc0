package io.tidemark.sync.internal.contract;

/** The names the procedure contract gives meaning to. */
final class ContractKeys {

    static final String METADATA = "Metadata";
    static final String SYNC = "Sync";
    static final String VERSION = "Version";
    static final String TYPE = "Type";
    static final String REASON_CODE = "ReasonCode";
    static final String DATA = "Data";

    static final String OPERATION = "$operation";
    static final String ROW_VERSION = "$version";
    static final String CHANGED = "$changed";

    private ContractKeys() {
    }

    /** {@code $operation}, {@code $version} or {@code $changed}: keys that are not the procedure's own columns. */
    static boolean isContractKey(String key) {
        return OPERATION.equals(key) || ROW_VERSION.equals(key) || CHANGED.equals(key);
    }

    /**
     * Envelope keys are matched without regard to case, the way the .NET tool the contract comes from reads
     * them, so procedures written for it work unchanged.
     */
    static boolean envelopeKey(String actual, String expected) {
        return expected.equalsIgnoreCase(actual);
    }
}
