package io.tidemark.testing;

import javax.sql.DataSource;

/**
 * What the databases a test class owns have in common, on either server: a name and a data source that connects
 * to it as the server's administrator.
 */
abstract class OwnedDatabase implements AutoCloseable {

    private final String name;
    private final DataSource dataSource;

    OwnedDatabase(String name, DataSource dataSource) {
        this.name = name;
        this.dataSource = dataSource;
    }

    /** The database's name on its server, unique to the test class that owns it. */
    public String name() {
        return name;
    }

    /** Connections as the server's administrator, to this database. Each call opens a new connection. */
    public DataSource dataSource() {
        return dataSource;
    }

    /** Drops the database. */
    @Override
    public abstract void close();
}
