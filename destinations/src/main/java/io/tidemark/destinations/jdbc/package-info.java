/** The JDBC table destination: changes applied to a table in another database, exactly once. */
package io.tidemark.destinations.jdbc;
