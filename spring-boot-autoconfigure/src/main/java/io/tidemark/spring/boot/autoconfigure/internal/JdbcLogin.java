package io.tidemark.spring.boot.autoconfigure.internal;

/**
 * Where a JDBC connection goes and as whom. The application's {@code spring.datasource.*} are the defaults of the
 * replication connection's {@code tidemark.logical.url}, {@code .username} and {@code .password}, each on its own,
 * as Flyway's and Liquibase's auto-configurations default theirs.
 *
 * @param url      the JDBC URL, or null
 * @param username the role, or null (the URL may carry it)
 * @param password the password, or null
 */
public record JdbcLogin(String url, String username, String password) {

    /** No defaults: the application has no {@code spring.datasource.*} (no DataSourceProperties bean). */
    public static final JdbcLogin NONE = new JdbcLogin(null, null, null);

    /** This login's values where set, {@code defaults}' elsewhere. */
    JdbcLogin orElse(JdbcLogin defaults) {
        return new JdbcLogin(url != null ? url : defaults.url, username != null ? username : defaults.username,
                password != null ? password : defaults.password);
    }

    /** Without the URL and the password: a record's toString would print them, and a URL may carry a password. */
    @Override
    public String toString() {
        return "JdbcLogin[username=" + username + "]";
    }
}
