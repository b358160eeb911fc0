package io.tidemark.testing;

import org.junit.jupiter.api.extension.ExtendWith;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Gives the annotated test class a fresh database on the JVM's embedded PostgreSQL server. Declare a
 * {@link javax.sql.DataSource} or {@link TestDatabase} parameter on a constructor, a lifecycle method or a test
 * method to receive it. The database is dropped after the class.
 *
 * <pre>{@code
 * @EmbeddedPostgresTest
 * class ItemsTest {
 *     @Test
 *     void works(DataSource dataSource) { ... }
 * }
 * }</pre>
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(EmbeddedPostgresExtension.class)
public @interface EmbeddedPostgresTest {
}
