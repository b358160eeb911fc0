package io.tidemark.sync.internal.coordination;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tidemark.sync.internal.Json;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The page a lease holder is about to deliver, recorded (fenced) on the object's lease row before each page: what
 * its {@code ChangeBatch} and so its idempotency key are made of (the call's version range, the page's number and
 * the number of pages), the page size and the response's row count that cut it, the position its destinations
 * stood at when it was offered, and those destinations (each of them took every earlier page of the response). An
 * instance that takes the lease over after a failover reads it, and when its destinations still stand exactly at
 * that position it delivers that same page again, under the same key, before anything newer.
 *
 * @param fromVersion  the version the procedure was asked for
 * @param toVersion    the response's version to store (its highest {@code $version})
 * @param page         the page's number, 1-based
 * @param pages        the response's number of pages
 * @param pageSize     the page size that cut the response into pages
 * @param total        the response's number of changes
 * @param boundary     the position stored for the destinations just before the page was offered (the boundary
 *                     before it, or {@code fromVersion} for a first page)
 * @param resumable    whether the response's rows carry ascending versions (only such a response can be cut again)
 * @param destinations the destinations the page is offered to
 */
public record InFlightPage(long fromVersion, long toVersion, int page, int pages, int pageSize, long total,
                           long boundary, boolean resumable, List<String> destinations) {

    public InFlightPage {
        destinations = List.copyOf(destinations);
    }

    /**
     * Whether destinations standing at {@code position} are where this page left them: exactly at the boundary
     * before it. Any other position (moved since by an instance that did not record its pages, or by this
     * response's later pages) means the record is stale, and re-reading from it would skip changes.
     */
    public boolean resumesAt(long position) {
        return resumable && position == boundary && fromVersion <= position && position < toVersion;
    }

    /** The compact JSON kept in the lease row. */
    public String toText() {
        ObjectNode node = Json.NODES.objectNode();
        node.put("from", fromVersion).put("to", toVersion).put("page", page).put("pages", pages)
                .put("pageSize", pageSize).put("total", total).put("boundary", boundary).put("resumable", resumable);
        ArrayNode names = node.putArray("destinations");
        destinations.forEach(names::add);
        return Json.write(node);
    }

    /**
     * Reads what {@link #toText()} wrote; empty for anything else (a row written by another version of Tidemark is
     * then simply not re-delivered under its key, as before pages in flight were recorded).
     */
    public static Optional<InFlightPage> parse(String text) {
        try {
            JsonNode node = Json.MAPPER.readTree(text);
            if (node == null || !node.path("destinations").isArray() || !node.path("to").canConvertToLong()
                    || !node.path("pageSize").canConvertToInt() || !node.path("boundary").canConvertToLong()) {
                return Optional.empty();
            }
            List<String> names = new ArrayList<>();
            node.get("destinations").forEach(n -> names.add(n.asText()));
            return Optional.of(new InFlightPage(node.path("from").asLong(), node.path("to").asLong(),
                    node.path("page").asInt(), node.path("pages").asInt(), node.path("pageSize").asInt(),
                    node.path("total").asLong(), node.path("boundary").asLong(), node.path("resumable").asBoolean(),
                    names));
        } catch (IOException e) {
            return Optional.empty();
        }
    }
}
