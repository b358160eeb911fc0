/** The JSON-lines files destination: one line per change, files written whole and renamed atomically. */
package io.tidemark.destinations.files;
