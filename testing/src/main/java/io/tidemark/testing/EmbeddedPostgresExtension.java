package io.tidemark.testing;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

import javax.sql.DataSource;

/**
 * JUnit 5 extension behind {@link EmbeddedPostgresTest}: one server per JVM ({@link EmbeddedPostgresServer#shared()}),
 * one fresh database per test class, created on first use and dropped when JUnit closes the class
 * (a {@link TestDatabase} is {@link AutoCloseable}). Nested classes
 * share their outer class's database.
 */
public final class EmbeddedPostgresExtension implements ParameterResolver {

    private static final ExtensionContext.Namespace NAMESPACE =
            ExtensionContext.Namespace.create(EmbeddedPostgresExtension.class);

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        Class<?> type = parameter.getParameter().getType();
        return type == DataSource.class || type == TestDatabase.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        TestDatabase database = database(context);
        return parameter.getParameter().getType() == TestDatabase.class ? database : database.dataSource();
    }

    /** The database of the outermost test class of {@code context}. */
    public static TestDatabase database(ExtensionContext context) {
        ExtensionContext classContext = outermostClassContext(context, "@EmbeddedPostgresTest");
        return classContext.getStore(NAMESPACE)
                .getOrComputeIfAbsent("database", key -> EmbeddedPostgresServer.shared().createDatabase(),
                        TestDatabase.class);
    }

    /** The context of the outermost test class of {@code context}: one database serves it and its nested classes. */
    static ExtensionContext outermostClassContext(ExtensionContext context, String annotation) {
        ExtensionContext classContext = null;
        ExtensionContext current = context;
        while (current != null) {
            if (current.getTestClass().isPresent() && current.getTestMethod().isEmpty()) {
                classContext = current;
            }
            current = current.getParent().orElse(null);
        }
        if (classContext == null) {
            throw new ParameterResolutionException(annotation + " needs a test class");
        }
        return classContext;
    }
}
