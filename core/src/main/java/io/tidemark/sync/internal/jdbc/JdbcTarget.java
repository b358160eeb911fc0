package io.tidemark.sync.internal.jdbc;

import javax.sql.DataSource;
import java.lang.reflect.Method;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Names the database a data source points at, for error messages: its JDBC URL without the password, when the
 * data source tells it (the PostgreSQL, SQL Server and Hikari data sources do), else the data source's class.
 * A failure message can then add the host and port the driver reported.
 */
public final class JdbcTarget {

    /** The getters the common data sources expose their URL through. */
    private static final String[] URL_GETTERS = {"getUrl", "getURL", "getJdbcUrl"};

    /** {@code password=secret} in a query string ({@code ?&}) or a SQL Server property list ({@code ;}). */
    private static final Pattern PASSWORD = Pattern.compile("(?i)([?&;]\\s*password\\s*=)[^&;]*");
    /** {@code user:secret@} in the authority of a URL. */
    private static final Pattern USER_INFO = Pattern.compile("(//[^/@:?;]*):[^/@?;]*@");

    private JdbcTarget() {
    }

    /** The data source's URL without its password, or its class name when it does not tell its URL. */
    public static String describe(DataSource dataSource) {
        if (dataSource == null) {
            return "the data source";
        }
        for (String getter : URL_GETTERS) {
            String url = url(dataSource, getter);
            if (url != null && !url.isBlank()) {
                return withoutPassword(url);
            }
        }
        return "the data source " + dataSource.getClass().getName();
    }

    /** The URL of the database {@code connection} is open on, without its password, when the driver tells it. */
    public static String describe(Connection connection) {
        try {
            String url = connection.getMetaData().getURL();
            if (url != null && !url.isBlank()) {
                return withoutPassword(url);
            }
        } catch (SQLException | RuntimeException e) {
            // A broken connection may not answer; the generic name will have to do.
        }
        return "the connection's database";
    }

    /** {@code url} with every password it carries replaced by {@code ***}. */
    public static String withoutPassword(String url) {
        String masked = PASSWORD.matcher(url).replaceAll("$1***");
        return USER_INFO.matcher(masked).replaceAll("$1:***@");
    }

    private static String url(DataSource dataSource, String getter) {
        try {
            Method method = dataSource.getClass().getMethod(getter);
            if (method.getReturnType() != String.class || method.getParameterCount() != 0) {
                return null;
            }
            return (String) method.invoke(dataSource);
        } catch (ReflectiveOperationException | RuntimeException e) {
            // No such getter, or it is not accessible: the class name will have to do.
            return null;
        }
    }
}
