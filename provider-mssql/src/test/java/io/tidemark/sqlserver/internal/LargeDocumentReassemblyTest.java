package io.tidemark.sqlserver.internal;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.tidemark.sync.internal.contract.ResponseScanner;
import io.tidemark.sync.internal.contract.ResponseSummary;
import io.tidemark.sync.internal.payload.SpooledPayload;
import io.tidemark.sync.spi.ResponsePayload;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.Reader;
import java.io.StringReader;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A 50 MB change set, split the way SQL Server splits {@code FOR JSON} output (rows of about 2,000 characters)
 * with NULL and empty rows and odd-sized rows that cut escapes, non-ASCII characters and surrogate pairs, read
 * through {@link ChunkedReader} into the engine's spool and parsed as a stream.
 *
 * <p>It proves two things: the document comes out exactly (every row's decoded text is checked), and memory stays
 * bounded. The document is never held anywhere: the chunk source writes it as it goes. Heap in use is measured
 * after a full GC before the run, in the middle of the reassembly (at 40 MB), after the spool is complete (payload
 * still open) and after the parse; the growth has to stay under 24 MiB, against a document of 50 million
 * characters (100 MB as Java chars). The figures are printed to the test's output.
 */
class LargeDocumentReassemblyTest {

    private static final long TARGET_CHARS = 50_000_000L;
    private static final long PROBE_AT_CHARS = 40_000_000L;
    private static final long MAX_GROWTH_BYTES = 24L * 1024 * 1024;
    private static final MemoryMXBean MEMORY = ManagementFactory.getMemoryMXBean();

    @Test
    void a_50_mb_document_is_reassembled_exactly_in_bounded_memory() throws IOException {
        long baseline = usedAfterGc();
        GeneratedDocument document = new GeneratedDocument(TARGET_CHARS, PROBE_AT_CHARS, 2033, 7);
        ChunkedReader reader = new ChunkedReader(document);

        long started = System.nanoTime();
        try (ResponsePayload payload = ResponsePayload.spool(reader)) {
            long spooledMillis = (System.nanoTime() - started) / 1_000_000;
            long afterSpool = usedAfterGc();

            // The engine's own checking pass accepts it and finds every row.
            ResponseSummary summary = ResponseScanner.scan("Items", payload);
            Parsed parsed = parse(payload);
            long afterParse = usedAfterGc();
            long totalMillis = (System.nanoTime() - started) / 1_000_000;

            System.out.printf("50 MB reassembly: %,d characters in %,d chunks (%,d NULL, %,d empty), %,d rows;"
                            + " spooled in %,d ms, parsed by %,d ms%n", document.produced(), reader.chunks(),
                    reader.nullChunks(), reader.emptyChunks(), parsed.rows, spooledMillis, totalMillis);
            System.out.printf("heap in use after GC: baseline %,d B; at %,d characters read %,d B (%+,d);"
                            + " spool complete %,d B (%+,d); after parse %,d B (%+,d); document as Java chars %,d B%n",
                    baseline, PROBE_AT_CHARS, document.probedHeap(), document.probedHeap() - baseline, afterSpool,
                    afterSpool - baseline, afterParse, afterParse - baseline, document.produced() * 2);

            // Exact: same size, every row, every decoded value.
            assertThat(payload.size()).isEqualTo(document.produced());
            assertThat(document.produced()).isGreaterThanOrEqualTo(TARGET_CHARS);
            assertThat(reader.characters()).isEqualTo(document.produced());
            assertThat(parsed.rows).isEqualTo(document.rows());
            assertThat(parsed.textHash).isEqualTo(document.textHash());
            assertThat(parsed.versionSum).isEqualTo(document.versionSum());
            assertThat(parsed.metadataVersion).isEqualTo(document.rows());
            assertThat(summary.rowCount()).isEqualTo(document.rows());
            assertThat(summary.versionToStore()).isEqualTo(document.rows());
            // The rows really were cut awkwardly and interleaved with NULL and empty rows.
            assertThat(reader.nullChunks()).isGreaterThan(100);
            assertThat(reader.emptyChunks()).isGreaterThan(100);
            assertThat(document.cutsInsideSurrogatePairs()).isGreaterThan(100);
            assertThat(document.cutsAfterBackslash()).isGreaterThan(100);

            // Bounded: the spool kept at most its memory limit and wrote the rest to disk.
            assertThat(((SpooledPayload) payload).overflowed()).isTrue();
            assertThat(document.probedHeap() - baseline).isLessThan(MAX_GROWTH_BYTES);
            assertThat(afterSpool - baseline).isLessThan(MAX_GROWTH_BYTES);
            assertThat(afterParse - baseline).isLessThan(MAX_GROWTH_BYTES);
        }
    }

    private static long usedAfterGc() {
        MEMORY.gc();
        MEMORY.gc();
        return MEMORY.getHeapMemoryUsage().getUsed();
    }

    private static Parsed parse(ResponsePayload payload) throws IOException {
        Parsed parsed = new Parsed();
        try (JsonParser p = payload.openParser(new JsonFactory())) {
            JsonToken t;
            while ((t = p.nextToken()) != null) {
                if (t != JsonToken.FIELD_NAME) {
                    continue;
                }
                String field = p.currentName();
                p.nextToken();
                switch (field) {
                    case "Version":
                        parsed.metadataVersion = p.getLongValue();
                        break;
                    case "$version":
                        parsed.versionSum += p.getLongValue();
                        parsed.rows++;
                        break;
                    case "Text":
                        parsed.textHash = 31 * parsed.textHash + p.getText().hashCode();
                        break;
                    default:
                        break;
                }
            }
        }
        return parsed;
    }

    private static final class Parsed {
        long rows;
        long versionSum;
        long textHash;
        long metadataVersion;
    }

    /**
     * Writes a change set as chunks, on the fly. Most chunks are {@code chunkSize} characters like SQL Server's
     * FOR JSON rows; one in ten is 1 to 7 characters, so that cuts land everywhere; one in twenty-five is followed
     * by a NULL row and one in thirty by an empty row.
     */
    static final class GeneratedDocument implements ChunkSource {

        private static final String[] PIECES = {
                "plain ascii ", "\\\"quoted\\\" ", "back\\\\slash ", "tab\\t", "newline\\n", "\\u00e9\\u00fc ",
                "é ü ß ", "日本語 ", "😀🎉 ", "\\ud83d\\ude00 ", "Ωμέγα ", "🚀x"};
        private static final String[] DECODED = {
                "plain ascii ", "\"quoted\" ", "back\\slash ", "tab\t", "newline\n", "éü ",
                "é ü ß ", "日本語 ", "😀🎉 ", "😀 ", "Ωμέγα ", "🚀x"};

        private final long target;
        private final long probeAt;
        private final int chunkSize;
        private final Random random;
        private final StringBuilder pending = new StringBuilder(8192);
        private String current;
        private boolean started;
        private boolean finished;
        private long produced;
        private long rows;
        private long versionSum;
        private long textHash;
        private long probedHeap = -1;
        private long cutsInsideSurrogatePairs;
        private long cutsAfterBackslash;
        private boolean nullNext;
        private boolean emptyNext;

        GeneratedDocument(long target, long probeAt, int chunkSize, long seed) {
            this.target = target;
            this.probeAt = probeAt;
            this.chunkSize = chunkSize;
            this.random = new Random(seed);
        }

        @Override
        public boolean next() {
            if (nullNext) {
                nullNext = false;
                current = null;
                return true;
            }
            if (emptyNext) {
                emptyNext = false;
                current = "";
                return true;
            }
            int size = random.nextInt(10) == 0 ? 1 + random.nextInt(7) : chunkSize;
            fill(size);
            if (pending.length() == 0) {
                return false;
            }
            int take = Math.min(size, pending.length());
            current = pending.substring(0, take);
            pending.delete(0, take);
            if (Character.isHighSurrogate(current.charAt(take - 1))) {
                cutsInsideSurrogatePairs++;
            }
            if (current.charAt(take - 1) == '\\') {
                cutsAfterBackslash++;
            }
            long before = produced;
            produced += take;
            if (before < probeAt && produced >= probeAt) {
                probedHeap = usedAfterGc();
            }
            nullNext = random.nextInt(25) == 0;
            emptyNext = random.nextInt(30) == 0;
            return true;
        }

        @Override
        public Reader current() {
            return current == null ? null : new StringReader(current);
        }

        private void fill(int size) {
            if (!started) {
                pending.append("{\"Data\":[");
                started = true;
            }
            while (pending.length() < size && !finished) {
                if (produced + pending.length() >= target) {
                    // Metadata last (the contract allows any order): the checking pass must read every row first.
                    pending.append("],\"Metadata\":{\"Sync\":{\"Version\":").append(rows)
                            .append(",\"Type\":\"Diff\",\"ReasonCode\":0}}}");
                    finished = true;
                    break;
                }
                row();
            }
        }

        private void row() {
            rows++;
            versionSum += rows;
            StringBuilder encoded = new StringBuilder();
            StringBuilder decoded = new StringBuilder();
            int pieces = 3 + (int) (rows % 9);
            for (int i = 0; i < pieces; i++) {
                int piece = (int) ((rows * 7 + i * 3) % PIECES.length);
                encoded.append(PIECES[piece]);
                decoded.append(DECODED[piece]);
            }
            textHash = 31 * textHash + decoded.toString().hashCode();
            if (rows > 1) {
                pending.append(',');
            }
            pending.append("{\"$operation\":\"U\",\"$version\":").append(rows).append(",\"Id\":").append(rows)
                    .append(",\"Text\":\"").append(encoded).append("\",\"$changed\":[\"Text\"]}");
        }

        long produced() {
            return produced;
        }

        long rows() {
            return rows;
        }

        long versionSum() {
            return versionSum;
        }

        long textHash() {
            return textHash;
        }

        long probedHeap() {
            return probedHeap;
        }

        long cutsInsideSurrogatePairs() {
            return cutsInsideSurrogatePairs;
        }

        long cutsAfterBackslash() {
            return cutsAfterBackslash;
        }
    }
}
