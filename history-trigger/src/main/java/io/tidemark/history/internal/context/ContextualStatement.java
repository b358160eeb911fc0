package io.tidemark.history.internal.context;

import io.tidemark.history.ChangeContext;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The statement side of {@link ContextualConnection}. A prepared statement may run in two shapes: as prepared by
 * the application (no context due), or with the context push in front of its SQL, whose five parameters come
 * first. Parameters and statement settings are remembered (last value per index or setting) so that the statement
 * can switch shape between executions; after a prefixed execution the push's own result is skipped, so the
 * application sees exactly the results of its own SQL.
 */
final class ContextualStatement implements InvocationHandler {

    private static final Set<String> EXECUTE = Set.of("execute", "executeQuery", "executeUpdate", "executeLargeUpdate");
    private static final Set<String> BATCH = Set.of("addBatch", "clearBatch", "executeBatch", "executeLargeBatch");
    private static final Set<String> SETTINGS = Set.of("setFetchSize", "setMaxRows", "setLargeMaxRows",
            "setQueryTimeout", "setFetchDirection", "setMaxFieldSize", "setEscapeProcessing", "setPoolable",
            "setCursorName", "closeOnCompletion");

    private final ContextualConnection owner;
    private final Object connectionProxy;
    private final Statement plain;
    private final ContextualConnection.PreparedVariant variant;
    private final boolean piggyback;
    private final Map<Integer, Object[]> parameters = new LinkedHashMap<>();
    private final Map<Integer, Method> parameterSetters = new LinkedHashMap<>();
    private final Map<String, Object[]> settings = new LinkedHashMap<>();
    private final Map<String, Method> settingSetters = new LinkedHashMap<>();
    private PreparedStatement prefixed;
    private Statement current;

    ContextualStatement(ContextualConnection owner, Object connectionProxy, Statement plain,
                        ContextualConnection.PreparedVariant variant, boolean piggyback) {
        this.owner = owner;
        this.connectionProxy = connectionProxy;
        this.plain = plain;
        this.variant = variant;
        this.piggyback = piggyback;
        this.current = plain;
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
        String name = method.getName();
        Object[] a = args == null ? new Object[0] : args;
        if (EXECUTE.contains(name)) {
            return a.length == 0 ? executePrepared(method) : executeSql(method, a);
        }
        if (BATCH.contains(name)) {
            use(plain); // batches always run as prepared by the application
            if (name.startsWith("execute")) {
                ChangeContext due = owner.due();
                if (due != null) {
                    return owner.withSeparatePush(due, () -> invokeSql(plain, method, a));
                }
            }
            return ContextualConnection.call(plain, method, a);
        }
        if (isParameterSetter(method, a)) {
            parameters.put((Integer) a[0], a.clone());
            parameterSetters.put((Integer) a[0], method);
            return ContextualConnection.call(current, method, shifted(a, current == prefixed));
        }
        if (SETTINGS.contains(name)) {
            settings.put(name, a.clone());
            settingSetters.put(name, method);
            return ContextualConnection.call(current, method, a);
        }
        switch (name) {
            case "clearParameters":
                parameters.clear();
                parameterSetters.clear();
                return ContextualConnection.call(current, method, a);
            case "getConnection":
                return connectionProxy;
            case "close":
                if (prefixed != null) {
                    prefixed.close();
                }
                plain.close();
                return null;
            case "equals":
                return proxy == a[0];
            case "hashCode":
                return System.identityHashCode(proxy);
            case "toString":
                return "ContextualStatement[" + current + "]";
            default:
                return ContextualConnection.call(current, method, a);
        }
    }

    /** {@code Statement.execute(sql, ...)}: the push goes in front of the SQL text as literals. */
    private Object executeSql(Method method, Object[] a) throws Throwable {
        ChangeContext due = owner.due();
        if (due == null) {
            return ContextualConnection.call(plain, method, a);
        }
        if (a.length > 1 || plain instanceof PreparedStatement) {
            // Generated keys (or execute(String) on a prepared statement, which PostgreSQL's driver refuses anyway).
            return owner.withSeparatePush(due, () -> invokeSql(plain, method, a));
        }
        plain.execute(owner.sql().literalPrefix(due) + a[0]);
        owner.pushed(due);
        return ownResults(method.getName(), plain);
    }

    /** {@code PreparedStatement.execute()}: the push goes in front as a prepared statement with five more parameters. */
    private Object executePrepared(Method method) throws Throwable {
        ChangeContext due = owner.due();
        if (due == null) {
            use(plain);
            return ContextualConnection.call(plain, method, new Object[0]);
        }
        if (!piggyback) {
            use(plain);
            return owner.withSeparatePush(due, () -> invokeSql(plain, method, new Object[0]));
        }
        use(prefixed());
        owner.sql().bind(prefixed, due, 1);
        prefixed.execute();
        owner.pushed(due);
        return ownResults(method.getName(), prefixed);
    }

    /** Skips the push's result and answers the way the called method would have for the application's SQL alone. */
    private static Object ownResults(String method, Statement statement) throws SQLException {
        boolean resultSet = statement.getMoreResults();
        switch (method) {
            case "execute":
                return resultSet;
            case "executeQuery":
                if (!resultSet) {
                    throw new SQLException("No results were returned by the query.", "02000");
                }
                return statement.getResultSet();
            case "executeLargeUpdate":
                if (resultSet) {
                    throw new SQLException("A result was returned when none was expected.", "0100E");
                }
                return statement.getLargeUpdateCount();
            default:
                if (resultSet) {
                    throw new SQLException("A result was returned when none was expected.", "0100E");
                }
                return statement.getUpdateCount();
        }
    }

    private PreparedStatement prefixed() throws Throwable {
        if (prefixed == null) {
            Object[] args = variant.args.clone();
            args[0] = owner.sql().preparedPrefix() + args[0];
            prefixed = (PreparedStatement) ContextualConnection.call(owner.delegate(), variant.method, args);
        }
        return prefixed;
    }

    /** Makes {@code target} the statement that receives calls, replaying settings and parameters onto it. */
    private void use(Statement target) throws SQLException {
        if (current == target) {
            return;
        }
        try {
            for (Map.Entry<String, Object[]> s : settings.entrySet()) {
                ContextualConnection.call(target, settingSetters.get(s.getKey()), s.getValue());
            }
            for (Map.Entry<Integer, Object[]> p : parameters.entrySet()) {
                ContextualConnection.call(target, parameterSetters.get(p.getKey()), shifted(p.getValue(),
                        target == prefixed));
            }
        } catch (SQLException | RuntimeException e) {
            throw e;
        } catch (Throwable e) {
            throw new SQLException("Could not prepare the statement for the change context push: " + e, e);
        }
        current = target;
    }

    private static Object invokeSql(Statement target, Method method, Object[] a) throws SQLException {
        try {
            return ContextualConnection.call(target, method, a);
        } catch (SQLException | RuntimeException e) {
            throw e;
        } catch (Throwable e) {
            throw new SQLException(e);
        }
    }

    /** A PreparedStatement/CallableStatement parameter setter: set*(int index, value...). */
    private static boolean isParameterSetter(Method method, Object[] a) {
        return method.getName().startsWith("set") && a.length >= 2 && method.getParameterTypes()[0] == int.class
                && PreparedStatement.class.isAssignableFrom(method.getDeclaringClass());
    }

    private static Object[] shifted(Object[] a, boolean prefixedTarget) {
        if (!prefixedTarget) {
            return a;
        }
        Object[] copy = a.clone();
        copy[0] = (Integer) a[0] + ContextSql.PARAMETERS;
        return copy;
    }
}
