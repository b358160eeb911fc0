package io.tidemark.sync.internal.coordination;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import io.tidemark.sync.internal.Json;

import java.io.IOException;
import java.util.Collection;
import java.util.Set;
import java.util.TreeSet;

/**
 * The destinations an instance delivers to, sent with its heartbeat, and their union over the live instances
 * tracking the same objects. An instance holding an object's lease keeps the object's watermark at or below the
 * stored position of every destination in that union, its own or not: so an instance that does not (yet, or any
 * more) deliver to a destination another live instance has never moves the watermark past that destination's
 * position, and when the lease goes back, the destination continues where it stopped instead of starting again.
 * A destination no live instance has any more stops holding the watermark.
 */
final class LiveDestinations {

    private LiveDestinations() {
    }

    /** The heartbeat's column: the names as a JSON array, sorted. */
    static String toText(Collection<String> names) {
        ArrayNode array = Json.NODES.arrayNode();
        new TreeSet<>(names).forEach(array::add);
        return Json.write(array);
    }

    /** Adds the names of one heartbeat's column to {@code into}; a value it cannot read adds nothing. */
    static void addTo(Set<String> into, String text) {
        try {
            JsonNode node = Json.MAPPER.readTree(text);
            if (node != null && node.isArray()) {
                node.forEach(n -> into.add(n.asText()));
            }
        } catch (IOException e) {
            // written by another version of Tidemark: that instance's destinations hold nothing back
        }
    }
}
