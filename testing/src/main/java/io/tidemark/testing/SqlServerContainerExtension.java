package io.tidemark.testing;

import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

import javax.sql.DataSource;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

/**
 * JUnit 5 extension behind {@link SqlServerContainerTest}: skips the class when SQL Server cannot be started
 * (no Testcontainers, no Docker), otherwise one container per JVM ({@link SqlServerContainerServer#shared()}) and
 * one fresh database per test class, created on first use and dropped when JUnit closes the class (a
 * {@link SqlServerDatabase} is {@link AutoCloseable}). Nested classes share their outer class's database.
 */
public final class SqlServerContainerExtension implements ExecutionCondition, ParameterResolver {

    private static final ExtensionContext.Namespace NAMESPACE =
            ExtensionContext.Namespace.create(SqlServerContainerExtension.class);
    private static final AtomicBoolean REASON_PRINTED = new AtomicBoolean();
    private static volatile ConditionEvaluationResult availability;

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        ConditionEvaluationResult result = availability;
        if (result == null) {
            result = evaluate(classesPresent(), () -> SqlServerContainerServer.dockerAvailable());
            availability = result;
        }
        if (result.isDisabled() && REASON_PRINTED.compareAndSet(false, true)) {
            System.out.println("[tidemark-testing] " + result.getReason().orElse(""));
        }
        return result;
    }

    /**
     * The decision, apart from how it is probed: Testcontainers and the driver must be on the classpath, and Docker
     * must answer. The Docker probe runs only when the classes are there.
     */
    static ConditionEvaluationResult evaluate(boolean classesPresent, BooleanSupplier dockerAvailable) {
        if (!classesPresent) {
            return ConditionEvaluationResult.disabled("SQL Server container tests skipped: Testcontainers or the"
                    + " SQL Server JDBC driver is not on the test classpath. Add"
                    + " org.testcontainers:testcontainers-mssqlserver and com.microsoft.sqlserver:mssql-jdbc in test"
                    + " scope to run them.");
        }
        if (!dockerAvailable.getAsBoolean()) {
            return ConditionEvaluationResult.disabled("SQL Server container tests skipped: no Docker environment"
                    + " was found (Testcontainers tried DOCKER_HOST, the local Docker socket and"
                    + " ~/.testcontainers.properties). They run wherever Docker runs.");
        }
        return ConditionEvaluationResult.enabled("Docker is available; SQL Server runs in a container");
    }

    private static boolean classesPresent() {
        ClassLoader loader = SqlServerContainerExtension.class.getClassLoader();
        try {
            Class.forName("org.testcontainers.mssqlserver.MSSQLServerContainer", false, loader);
            Class.forName("com.microsoft.sqlserver.jdbc.SQLServerDataSource", false, loader);
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        Class<?> type = parameter.getParameter().getType();
        return type == DataSource.class || type == SqlServerDatabase.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        SqlServerDatabase database = database(context);
        return parameter.getParameter().getType() == SqlServerDatabase.class ? database : database.dataSource();
    }

    /** The database of the outermost test class of {@code context}. */
    public static SqlServerDatabase database(ExtensionContext context) {
        ExtensionContext classContext =
                EmbeddedPostgresExtension.outermostClassContext(context, "@SqlServerContainerTest");
        return classContext.getStore(NAMESPACE).getOrComputeIfAbsent("database",
                key -> SqlServerContainerServer.shared().createDatabase(), SqlServerDatabase.class);
    }
}
