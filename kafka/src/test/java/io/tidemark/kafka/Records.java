package io.tidemark.kafka;

import com.fasterxml.jackson.databind.JsonNode;
import io.tidemark.sync.internal.Json;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Reading back what the destination wrote. */
final class Records {

    private Records() {
    }

    static String key(ConsumerRecord<byte[], byte[]> record) {
        return new String(record.key(), StandardCharsets.UTF_8);
    }

    static JsonNode value(ConsumerRecord<byte[], byte[]> record) {
        try {
            return Json.MAPPER.readTree(record.value());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static long version(ConsumerRecord<byte[], byte[]> record) {
        return value(record).get("$version").asLong();
    }

    static String header(ConsumerRecord<byte[], byte[]> record, String name) {
        Header h = record.headers().lastHeader(name);
        return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }

    /** Each key's values' versions in the order a consumer of its partition reads them. */
    static Map<String, List<Long>> versionsByKey(List<ConsumerRecord<byte[], byte[]>> records) {
        Map<String, List<Long>> byKey = new LinkedHashMap<>();
        for (ConsumerRecord<byte[], byte[]> r : records) {
            if (r.value() != null) {
                byKey.computeIfAbsent(key(r), k -> new ArrayList<>()).add(version(r));
            }
        }
        return byKey;
    }
}
