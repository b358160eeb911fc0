package io.tidemark.history.internal.context;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;

import java.util.regex.Pattern;

/** The rule for the change-context settings prefix, shared by the trigger's configuration and the integrations. */
public final class SettingsPrefix {

    /** A custom setting is {@code prefix.name}; PostgreSQL wants the prefix to be a plain identifier. */
    private static final Pattern PREFIX = Pattern.compile("[a-z_][a-z0-9_]{0,39}");

    private SettingsPrefix() {
    }

    /** @throws TidemarkException INVALID_CONFIGURATION naming {@code object} */
    public static String check(String prefix, String object) {
        if (prefix == null || !PREFIX.matcher(prefix).matches()) {
            throw TidemarkException.forObject(ErrorCode.INVALID_CONFIGURATION, object, "settings prefix '" + prefix
                    + "' is not a plain lower-case identifier of at most 40 characters; use letters, digits and _"
                    + " such as 'tidemark' or 'app_audit'");
        }
        return prefix;
    }
}
