package io.tidemark.postgres.internal.logical;

import io.tidemark.postgres.PostgresLogicalCapture;
import io.tidemark.sync.spi.ResponsePayload;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

/** A page of a table's log as the contract's answer: the envelope around elements rendered when decoded. */
public final class LogicalResponse {

    private LogicalResponse() {
    }

    /** An answer without rows at {@code version} (a seed, or nothing new). */
    public static ResponsePayload empty(long version) {
        return payload(List.of(), version, "Diff", 0);
    }

    /**
     * The answer for {@code page}, read after {@code fromVersion} when the stream stood at {@code position}: a
     * truncate as a {@code Full} answer at its version, holding what its transaction wrote after it; otherwise a
     * {@code Diff}, whose version is the page's last when more follows, else the stream's position (never below
     * {@code fromVersion}).
     */
    public static ResponsePayload of(TableLog.Page page, long fromVersion, long position) {
        if (page.truncate()) {
            return payload(page.elements(), page.lastVersion(), "Full", PostgresLogicalCapture.TRUNCATE_REASON_CODE);
        }
        long version = page.more() ? page.lastVersion() : Math.max(Math.max(fromVersion, position), page.lastVersion());
        return payload(page.elements(), version, "Diff", 0);
    }

    private static ResponsePayload payload(List<byte[]> elements, long version, String type, int reasonCode) {
        int size = 96;
        for (byte[] element : elements) {
            size += element.length + 1;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(size);
        out.writeBytes(header(version, type, reasonCode).getBytes(StandardCharsets.UTF_8));
        boolean first = true;
        for (byte[] element : elements) {
            if (!first) {
                out.write(',');
            }
            out.writeBytes(element);
            first = false;
        }
        out.writeBytes("]}".getBytes(StandardCharsets.UTF_8));
        return ResponsePayload.ofUtf8(out.toByteArray());
    }

    /** The answer's text up to its first element: the envelope and the opening of {@code Data}. */
    static String header(long version, String type, int reasonCode) {
        return "{\"Metadata\":{\"Sync\":{\"Version\":" + version + ",\"Type\":\"" + type + "\",\"ReasonCode\":"
                + reasonCode + "}},\"Data\":[";
    }
}
