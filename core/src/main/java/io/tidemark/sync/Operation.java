package io.tidemark.sync;

import java.util.Optional;

/** The kind of change a row reports in {@code $operation}. */
public enum Operation {
    INSERT("I"),
    UPDATE("U"),
    DELETE("D");

    private final String code;

    Operation(String code) {
        this.code = code;
    }

    /** The one-letter code of the contract: {@code I}, {@code U} or {@code D}. */
    public String code() {
        return code;
    }

    /** Parses a contract code; empty for anything that is not exactly {@code I}, {@code U} or {@code D}. */
    public static Optional<Operation> fromCode(String code) {
        if (code == null || code.length() != 1) {
            return Optional.empty();
        }
        switch (code.charAt(0)) {
            case 'I':
                return Optional.of(INSERT);
            case 'U':
                return Optional.of(UPDATE);
            case 'D':
                return Optional.of(DELETE);
            default:
                return Optional.empty();
        }
    }
}
