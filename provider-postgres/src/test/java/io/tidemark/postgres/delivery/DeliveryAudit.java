package io.tidemark.postgres.delivery;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Checks what one destination accepted, in order: that every expected row arrived; that, leaving re-deliveries
 * aside, versions never go down; and that a change accepted twice came again under an idempotency key it had
 * already been accepted under, or a process restart lies between the two (then the page was in flight when the
 * process died; such re-deliveries are counted per run, whatever their key).
 */
final class DeliveryAudit {

    final String destination;
    final List<String> problems = new ArrayList<>();
    /** Changes accepted more than once. */
    long duplicates;
    /** Of those, the ones under a key they had been accepted under before. */
    long duplicatesUnderSameKey;
    /** Per run (restart), the changes accepted again that had been accepted in an earlier run. */
    final Map<Integer, Long> redeliveredAfterRestart = new HashMap<>();
    long pages;

    private DeliveryAudit(String destination) {
        this.destination = destination;
    }

    static DeliveryAudit of(String destination, List<AcceptedPage> accepted, long expectedRows) {
        DeliveryAudit audit = new DeliveryAudit(destination);
        audit.check(accepted, expectedRows);
        return audit;
    }

    private void check(List<AcceptedPage> accepted, long expectedRows) {
        Map<Long, Set<String>> keysOf = new HashMap<>();
        Map<Long, Integer> runOf = new HashMap<>();
        long highest = Long.MIN_VALUE;
        AcceptedPage previous = null;
        for (AcceptedPage page : accepted) {
            pages++;
            // Pages of a response arrive in order: page k+1 only right after page k, in the same run.
            if (page.page() > 1 && (previous == null || previous.run() != page.run()
                    || previous.fromVersion() != page.fromVersion() || previous.toVersion() != page.toVersion()
                    || previous.page() != page.page() - 1)) {
                problems.add(destination + ": page " + page.page() + "/" + page.pageCount() + " of "
                        + page.fromVersion() + "-" + page.toVersion() + " accepted without the page before it");
            }
            for (int i = 0; i < page.ids().size(); i++) {
                long id = page.ids().get(i);
                long version = page.versions().get(i);
                Set<String> keys = keysOf.get(id);
                if (keys == null) {
                    if (version < highest) {
                        problems.add(destination + ": row " + id + " at version " + version
                                + " arrived after version " + highest);
                    }
                    highest = Math.max(highest, version);
                    keys = new HashSet<>();
                    keysOf.put(id, keys);
                    runOf.put(id, page.run());
                } else {
                    duplicates++;
                    boolean sameKey = keys.contains(page.key());
                    if (sameKey) {
                        duplicatesUnderSameKey++;
                    }
                    if (runOf.get(id) != page.run()) {
                        redeliveredAfterRestart.merge(page.run(), 1L, Long::sum);
                    } else if (!sameKey) {
                        problems.add(destination + ": row " + id + " accepted again within one run under another"
                                + " key " + page.key());
                    }
                }
                keys.add(page.key());
            }
            previous = page;
        }
        for (long id = 1; id <= expectedRows; id++) {
            if (!keysOf.containsKey(id)) {
                problems.add(destination + ": row " + id + " never arrived");
                if (problems.size() > 20) {
                    return;
                }
            }
        }
    }

    @Override
    public String toString() {
        return destination + ": " + pages + " pages, " + duplicates + " changes accepted twice (" + duplicatesUnderSameKey
                + " under the same key, " + redeliveredAfterRestart.values().stream().mapToLong(Long::longValue).sum()
                + " after a restart), " + problems.size() + " problems";
    }
}
