package io.tidemark.history.internal.context;

import io.tidemark.history.ChangeContext;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.function.Supplier;

/**
 * A connection that hands the current {@link ChangeContext} to the history trigger without an extra round trip.
 *
 * <p>Before each statement it asks the context source for the context of the current unit of work. When that has
 * to be pushed, the push ({@code SELECT set_config(...)}) is sent in front of the statement, in the same
 * round trip (PostgreSQL runs both in one implicit transaction when auto-commit is on, so a transaction is only
 * opened when there is context). A context is pushed:
 * <ul>
 *   <li>in auto-commit mode, with every statement, when it is not empty (each statement is its own transaction);</li>
 *   <li>inside a transaction, whenever it differs from what was last pushed in that transaction, empty values
 *       included, so a later unit of work never inherits an earlier one's reason.</li>
 * </ul>
 * Batches and statements asking for generated keys push in a statement of their own (one round trip), because
 * their result accounting cannot carry an extra statement.
 */
public final class ContextualConnection implements InvocationHandler {

    private final Connection delegate;
    private final Supplier<ChangeContext> source;
    private final ContextSql sql;
    /** What was pushed in the current transaction; null when nothing was (or the transaction ended). */
    private ChangeContext pushed;

    private ContextualConnection(Connection delegate, Supplier<ChangeContext> source, ContextSql sql) {
        this.delegate = delegate;
        this.source = source;
        this.sql = sql;
    }

    public static Connection wrap(Connection delegate, Supplier<ChangeContext> source, String settingsPrefix) {
        return wrap(delegate, source, new ContextSql(settingsPrefix));
    }

    /** Wraps with SQL built once for the prefix: a data source shares it among all its connections. */
    public static Connection wrap(Connection delegate, Supplier<ChangeContext> source, ContextSql sql) {
        return (Connection) Proxy.newProxyInstance(ContextualConnection.class.getClassLoader(),
                new Class<?>[] {Connection.class}, new ContextualConnection(delegate, source, sql));
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
        String name = method.getName();
        Object[] a = args == null ? new Object[0] : args;
        switch (name) {
            case "commit":
            case "rollback": // also rollback(Savepoint): settings made after the savepoint are undone with it
            case "setAutoCommit":
                Object result = call(delegate, method, a);
                pushed = null;
                return result;
            case "createStatement":
                return wrapStatement(proxy, Statement.class, (Statement) call(delegate, method, a), null, true);
            case "prepareStatement":
                // (sql) and (sql, type, concurrency[, holdability]) can carry the push; generated-key variants cannot.
                boolean piggyback = a.length == 1 || (a.length >= 3 && a[1] instanceof Integer && a[2] instanceof Integer);
                return wrapStatement(proxy, PreparedStatement.class, (Statement) call(delegate, method, a),
                        piggyback ? new PreparedVariant(method, a) : null, piggyback);
            case "prepareCall":
                return wrapStatement(proxy, CallableStatement.class, (Statement) call(delegate, method, a), null, false);
            case "unwrap":
                return ((Class<?>) a[0]).isInstance(proxy) ? proxy : delegate.unwrap((Class<?>) a[0]);
            case "isWrapperFor":
                return ((Class<?>) a[0]).isInstance(proxy) || delegate.isWrapperFor((Class<?>) a[0]);
            case "equals":
                return proxy == a[0];
            case "hashCode":
                return System.identityHashCode(proxy);
            case "toString":
                return "ContextualConnection[" + delegate + "]";
            default:
                return call(delegate, method, a);
        }
    }

    private Object wrapStatement(Object connectionProxy, Class<?> type, Statement statement, PreparedVariant variant,
                                 boolean piggyback) {
        return Proxy.newProxyInstance(ContextualConnection.class.getClassLoader(), new Class<?>[] {type},
                new ContextualStatement(this, connectionProxy, statement, variant, piggyback));
    }

    /** The context to push before the next statement, or null when nothing needs pushing. */
    ChangeContext due() throws SQLException {
        ChangeContext context = source.get();
        if (context == null) {
            context = ChangeContext.EMPTY;
        }
        if (delegate.getAutoCommit()) {
            return context.isEmpty() ? null : context;
        }
        if (pushed != null && DriverTransactionState.idle(delegate)) {
            pushed = null; // the transaction ended without commit() or rollback() (COMMIT as SQL text)
        }
        if (context.equals(pushed) || (pushed == null && context.isEmpty())) {
            return null; // a fresh transaction starts with every setting empty
        }
        return context;
    }

    /** Records a push that went to the server (it only outlives the statement inside a transaction). */
    void pushed(ChangeContext context) throws SQLException {
        if (!delegate.getAutoCommit()) {
            pushed = context;
        }
    }

    /** Runs {@code work} after pushing {@code context} in a round trip of its own, in a transaction if none is open. */
    <T> T withSeparatePush(ChangeContext context, SqlWork<T> work) throws SQLException {
        if (!delegate.getAutoCommit()) {
            sql.push(delegate, context);
            pushed = context;
            return work.run();
        }
        delegate.setAutoCommit(false);
        try {
            sql.push(delegate, context);
            T result = work.run();
            delegate.commit();
            return result;
        } catch (SQLException | RuntimeException e) {
            try {
                delegate.rollback();
            } catch (SQLException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        } finally {
            delegate.setAutoCommit(true);
        }
    }

    Connection delegate() {
        return delegate;
    }

    ContextSql sql() {
        return sql;
    }

    /** A JDBC call that may throw SQLException. */
    @FunctionalInterface
    interface SqlWork<T> {
        T run() throws SQLException;
    }

    /** How a prepareStatement call was made, to make the same call again with the push in front of the SQL. */
    static final class PreparedVariant {
        final Method method;
        final Object[] args;

        PreparedVariant(Method method, Object[] args) {
            this.method = method;
            this.args = args.clone();
        }
    }

    /** Invokes {@code method} on {@code target}, unwrapping the reflective exception. */
    static Object call(Object target, Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
