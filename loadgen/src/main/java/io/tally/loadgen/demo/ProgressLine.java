package io.tally.loadgen.demo;

import java.util.Locale;

/** The demo's live line: one a second, redrawn in place on a terminal. */
final class ProgressLine {
    private ProgressLine() {}

    /**
     * @param seconds  since loadgen started
     * @param width    the terminal's columns, 0 when stderr is not a terminal. A line as wide as the
     *                 terminal wraps, and a carriage return then redraws only its last row: shorter
     *                 labels, then cut.
     */
    static String format(long seconds, long produced, long planned, Progress p, long ruPerSecond, int width) {
        String line = String.format(Locale.ROOT, "%4ds  produced %s/%s  ingested %s  updates %s  docs %s  lag %s+%s  %s RU/s  429s %s",
                seconds, group(produced), group(planned), group(p.ingested()), group(p.updates()), group(p.docs()),
                group(p.aggLag()), group(p.sinkLag()), group(ruPerSecond), group(p.throttled()));
        if (width > 0 && line.length() >= width) {
            line = String.format(Locale.ROOT, "%ds prod %s/%s in %s upd %s docs %s lag %s+%s %s RU/s 429s %s",
                    seconds, group(produced), group(planned), group(p.ingested()), group(p.updates()), group(p.docs()),
                    group(p.aggLag()), group(p.sinkLag()), group(ruPerSecond), group(p.throttled()));
        }
        if (width > 0 && line.length() >= width) line = line.substring(0, width - 1);
        return line;
    }

    /** 1234567 -> 1,234,567 */
    static String group(long n) {
        return String.format(Locale.ROOT, "%,d", n);
    }
}
