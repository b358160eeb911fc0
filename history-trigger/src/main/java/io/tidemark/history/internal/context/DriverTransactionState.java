package io.tidemark.history.internal.context;

import java.lang.reflect.Method;
import java.sql.Connection;

/**
 * Asks the PostgreSQL JDBC driver, when it is the driver, whether no transaction is open on a connection. That is
 * how a transaction ended by SQL text ({@code COMMIT} run as a statement) is noticed: only commit() and rollback()
 * calls pass through the wrapper. Reflection keeps the driver an optional dependency; with another driver the
 * answer is always "unknown" and only the JDBC calls count.
 */
final class DriverTransactionState {

    private static final Class<?> BASE_CONNECTION = load("org.postgresql.core.BaseConnection");
    private static final Method TRANSACTION_STATE = method(BASE_CONNECTION, "getTransactionState");

    private DriverTransactionState() {
    }

    /** True when the driver reports that no transaction is open; false when one is, or when it cannot tell. */
    static boolean idle(Connection connection) {
        if (TRANSACTION_STATE == null) {
            return false;
        }
        try {
            if (!connection.isWrapperFor(BASE_CONNECTION)) {
                return false;
            }
            Object state = TRANSACTION_STATE.invoke(connection.unwrap(BASE_CONNECTION));
            return "IDLE".equals(String.valueOf(state));
        } catch (ReflectiveOperationException | java.sql.SQLException | RuntimeException e) {
            return false;
        }
    }

    private static Class<?> load(String name) {
        try {
            return Class.forName(name, false, DriverTransactionState.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            return null;
        }
    }

    private static Method method(Class<?> type, String name) {
        try {
            return type == null ? null : type.getMethod(name);
        } catch (NoSuchMethodException e) {
            return null;
        }
    }
}
