package io.tidemark.kafka.connect;

import io.tidemark.sync.TrackedObject;

import java.util.List;

/**
 * One tracked object as the connector runs it: the object core checks and calls, the JSON keys of its row key, and
 * its topic.
 *
 * @param object      the object, with its procedure, initial sync and maxRows
 * @param keyColumns  the JSON keys of a change that make up the record key, in order
 * @param topic       where its changes go
 */
public record ObjectSettings(TrackedObject object, List<String> keyColumns, String topic) {

    public ObjectSettings {
        keyColumns = List.copyOf(keyColumns);
    }
}
