package io.tidemark.sync.internal.coordination;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.TreeSet;

/**
 * The identity of the set of objects an instance tracks, sent with its heartbeat. The fair share of an instance is
 * counted among the live instances tracking the same set: those, and only those, can take each other's objects. An
 * engine of another application on the same store, or an instance not yet reconfigured like the others, counts in its
 * own set, so it never shrinks a share below what its set needs (every object of a set is then always someone's
 * share).
 */
final class ObjectSet {

    private ObjectSet() {
    }

    /** SHA-256 of the sorted names, 32 hex digits: equal for equal sets, in any order, on every instance. */
    static String of(List<String> names) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            for (String name : new TreeSet<>(names)) {
                digest.update(name.getBytes(StandardCharsets.UTF_8));
                digest.update((byte) 0);
            }
            return HexFormat.of().formatHex(digest.digest(), 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }
}
