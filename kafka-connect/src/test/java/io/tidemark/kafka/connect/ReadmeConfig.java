package io.tidemark.kafka.connect;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/** The connector configuration of the root README's "Kafka Connect" section, which the tests run. */
final class ReadmeConfig {

    private ReadmeConfig() {
    }

    /** The {@code config} object of the section's JSON block, as Connect receives it. */
    static Map<String, String> load() {
        try {
            Path readme = Path.of("..", "README.md");
            String text = Files.readString(readme);
            int section = text.indexOf("\n## Kafka Connect\n");
            if (section < 0) {
                throw new AssertionError("README.md has no section \"## Kafka Connect\"");
            }
            int start = text.indexOf("```json\n", section);
            int end = text.indexOf("\n```", start + 8);
            if (start < 0 || end < 0 || text.indexOf("\n## ", section + 5) < start) {
                throw new AssertionError("the README's Kafka Connect section has no ```json block");
            }
            JsonNode request = new ObjectMapper().readTree(text.substring(start + 8, end));
            Map<String, String> config = new LinkedHashMap<>();
            request.get("config").properties().forEach(e -> config.put(e.getKey(), e.getValue().asText()));
            return config;
        } catch (IOException e) {
            throw new AssertionError("could not read README.md", e);
        }
    }
}
