package io.tidemark.testing;

import org.junit.jupiter.api.extension.ExtendWith;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Gives the annotated test class a fresh database on a SQL Server 2022 container, started once per JVM through
 * Testcontainers. Declare a {@link javax.sql.DataSource} or {@link SqlServerDatabase} parameter on a constructor,
 * a lifecycle method or a test method to receive it. The database is dropped after the class.
 *
 * <p>Where there is no Docker (or Testcontainers is not on the test classpath) the class is skipped, and the
 * reason is printed once and recorded as the skip reason of each test.
 *
 * <pre>{@code
 * @SqlServerContainerTest
 * class ItemsTest {
 *     @Test
 *     void works(SqlServerDatabase database) { ... }
 * }
 * }</pre>
 *
 * <p>Setup: add {@code org.testcontainers:testcontainers-mssqlserver} and {@code com.microsoft.sqlserver:mssql-jdbc}
 * in test scope (tidemark-testing declares them optional), and accept the SQL Server image's EULA the Testcontainers
 * way: a file {@code container-license-acceptance.txt} on the test classpath holding the line
 * {@value SqlServerContainerServer#DEFAULT_IMAGE}. The image can be changed with the system property
 * {@value SqlServerContainerServer#IMAGE_PROPERTY}.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(SqlServerContainerExtension.class)
public @interface SqlServerContainerTest {
}
