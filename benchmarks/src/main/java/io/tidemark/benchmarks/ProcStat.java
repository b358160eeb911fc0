package io.tidemark.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What a benchmark reads of a local process from {@code /proc/<pid>/stat} (Linux; the embedded server runs on the
 * benchmark's machine, so its backends are local processes).
 */
public final class ProcStat {

    private ProcStat() {
    }

    /** CPU time (user + system) the process has used, in milliseconds. Clock ticks are 10 ms. */
    public static long cpuMillis(int pid) throws IOException {
        String[] fields = stat(pid);
        return (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) * 10;
    }

    /**
     * Minor page faults the process has taken: each is a first touch of a fresh page. They are counted because on
     * this project's sandboxed machines one costs about 14 microseconds, against well under one on a plain Linux
     * kernel, so a benchmark that allocates large values measures mostly the sandbox unless they are shown.
     */
    public static long minorFaults(int pid) throws IOException {
        return Long.parseLong(stat(pid)[7]);
    }

    /** The parent of the process: for a backend, the postmaster. */
    public static int parentPid(int pid) throws IOException {
        return Integer.parseInt(stat(pid)[1]);
    }

    /** The fields of /proc/pid/stat after the command name, the first being the state (field 3 of proc(5)). */
    private static String[] stat(int pid) throws IOException {
        String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
        return stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    }
}
