package io.tidemark.destinations.webhook.internal;

import com.fasterxml.jackson.core.JsonGenerator;
import io.tidemark.sync.Change;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.Envelope;
import io.tidemark.sync.internal.Json;
import io.tidemark.sync.spi.DeliveryException;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Cuts a page into requests of at most {@code maxBytes} bytes of JSON and writes each request's body.
 *
 * <p>A page that fits is one request whose body is exactly {@link Envelope#toBytes}. A page that does not is cut
 * before the limit would be passed: every part carries the envelope's fields plus {@code "part"} and
 * {@code "partCount"}, and a consecutive run of the page's changes, in order. Sizes are exact, not estimated: a
 * change's JSON is copied as the bytes the procedure returned, so its length is known before anything is written.
 * The whole plan is made before the first request goes out, so a change that can never fit fails the page before
 * any part of it is sent.
 */
public final class EnvelopeParts {

    private static final byte[] CLOSE = {']', '}'};

    private EnvelopeParts() {
    }

    /** The requests for {@code batch}; one when {@code maxBytes} is 0 (no limit) or the page fits. */
    public static List<RequestPart> plan(ChangeBatch batch, long maxBytes) {
        List<Change> changes = batch.changes();
        int n = changes.size();
        String key = batch.idempotencyKey();
        if (maxBytes <= 0 || wholeSize(batch) <= maxBytes) {
            return List.of(new RequestPart(batch, key, 1, 1, 0, n));
        }
        // Part numbers never have more digits than the number of changes, so this prefix is the longest any part has.
        long prefix = prefix(batch, n, n).length;
        long empty = prefix + CLOSE.length;
        List<int[]> ranges = new ArrayList<>();
        int from = 0;
        long size = empty;
        for (int i = 0; i < n; i++) {
            int length = changes.get(i).rawUtf8().length;
            if (empty + length > maxBytes) {
                throw tooLarge(batch, i, length, empty + length, maxBytes);
            }
            long added = (i > from ? 1 : 0) + length;
            if (size + added > maxBytes) {
                ranges.add(new int[] {from, i});
                from = i;
                size = empty + length;
            } else {
                size += added;
            }
        }
        ranges.add(new int[] {from, n});
        List<RequestPart> parts = new ArrayList<>(ranges.size());
        for (int p = 0; p < ranges.size(); p++) {
            int[] r = ranges.get(p);
            parts.add(new RequestPart(batch, key + "-p" + (p + 1), p + 1, ranges.size(), r[0], r[1]));
        }
        return List.copyOf(parts);
    }

    /** The JSON body of {@code part}: the envelope with the part's changes, their bytes copied as returned. */
    public static byte[] body(RequestPart part) {
        ChangeBatch batch = part.batch();
        byte[] prefix = part.isSplit() ? prefix(batch, part.part(), part.parts()) : prefix(batch, 0, 0);
        List<Change> changes = batch.changes();
        int size = prefix.length + CLOSE.length + Math.max(0, part.changeCount() - 1);
        for (int i = part.from(); i < part.to(); i++) {
            size += changes.get(i).rawUtf8().length;
        }
        byte[] body = new byte[size];
        System.arraycopy(prefix, 0, body, 0, prefix.length);
        int at = prefix.length;
        for (int i = part.from(); i < part.to(); i++) {
            if (i > part.from()) {
                body[at++] = ',';
            }
            byte[] raw = changes.get(i).rawUtf8();
            System.arraycopy(raw, 0, body, at, raw.length);
            at += raw.length;
        }
        System.arraycopy(CLOSE, 0, body, at, CLOSE.length);
        return body;
    }

    private static long wholeSize(ChangeBatch batch) {
        List<Change> changes = batch.changes();
        long size = prefix(batch, 0, 0).length + CLOSE.length + Math.max(0, changes.size() - 1);
        for (Change change : changes) {
            size += change.rawUtf8().length;
        }
        return size;
    }

    /** {@code {<envelope fields>[,"part":p,"partCount":m],"changes":[} as UTF-8; part 0 means not split. */
    private static byte[] prefix(ChangeBatch batch, int part, int parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(320);
        try {
            JsonGenerator g = Json.FACTORY.createGenerator(out);
            g.writeStartObject();
            Envelope.writeFields(batch, g);
            if (part > 0) {
                g.writeNumberField("part", part);
                g.writeNumberField("partCount", parts);
            }
            g.writeArrayFieldStart("changes");
            // Flushed, not closed: closing would end the array and the object, which the caller writes itself.
            g.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    private static DeliveryException tooLarge(ChangeBatch batch, int index, int length, long needed, long maxBytes) {
        Change change = batch.changes().get(index);
        String version = change.version().isPresent() ? ", version " + change.version().getAsLong() : "";
        return DeliveryException.fatal(String.format(Locale.ROOT,
                "change %d of page %d/%d of object '%s'%s is %,d bytes of JSON; with the envelope one request needs"
                        + " %,d bytes, more than maxRequestBytes %,d: raise maxRequestBytes (the change is not dropped)",
                index + 1, batch.pageNumber(), batch.pageCount(), batch.objectName(), version, length, needed,
                maxBytes), null);
    }
}
