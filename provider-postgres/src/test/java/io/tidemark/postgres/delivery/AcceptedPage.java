package io.tidemark.postgres.delivery;

import io.tidemark.sync.Change;
import io.tidemark.sync.ChangeBatch;

import java.util.ArrayList;
import java.util.List;

/**
 * A page a destination accepted (its {@code deliver} returned), as the delivery runs record it: the page's
 * idempotency key and place, and its changes' versions and row ids.
 *
 * @param run the process run it was accepted in (the crash test counts restarts); 0 when there is only one
 */
record AcceptedPage(int run, String key, long fromVersion, long toVersion, int page, int pageCount,
                    List<Long> versions, List<Long> ids, long acceptedNanos) {

    static AcceptedPage of(int run, ChangeBatch batch, long acceptedNanos) {
        List<Long> versions = new ArrayList<>(batch.changes().size());
        List<Long> ids = new ArrayList<>(batch.changes().size());
        for (Change c : batch.changes()) {
            versions.add(c.version().orElseThrow());
            ids.add(c.fields().get("id").asLong());
        }
        return new AcceptedPage(run, batch.idempotencyKey(), batch.fromVersion(), batch.toVersion(),
                batch.pageNumber(), batch.pageCount(), versions, ids, acceptedNanos);
    }

    /** One line: run, key, from, to, page, count, then version:id pairs. */
    String toLine() {
        StringBuilder sb = new StringBuilder(32 + ids.size() * 16).append(run).append(' ').append(key).append(' ')
                .append(fromVersion).append(' ').append(toVersion).append(' ').append(page).append(' ')
                .append(pageCount);
        for (int i = 0; i < ids.size(); i++) {
            sb.append(' ').append(versions.get(i)).append(':').append(ids.get(i));
        }
        return sb.append('\n').toString();
    }

    static AcceptedPage parse(String line) {
        String[] parts = line.split(" ");
        List<Long> versions = new ArrayList<>();
        List<Long> ids = new ArrayList<>();
        for (int i = 6; i < parts.length; i++) {
            int colon = parts[i].indexOf(':');
            versions.add(Long.parseLong(parts[i].substring(0, colon)));
            ids.add(Long.parseLong(parts[i].substring(colon + 1)));
        }
        return new AcceptedPage(Integer.parseInt(parts[0]), parts[1], Long.parseLong(parts[2]),
                Long.parseLong(parts[3]), Integer.parseInt(parts[4]), Integer.parseInt(parts[5]), versions, ids, 0);
    }
}
