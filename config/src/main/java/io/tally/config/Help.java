package io.tally.config;

import java.util.Arrays;
import java.util.Collection;

/**
 * {@code --help} for every application: a usage text written by the application, then its settings as the
 * {@link Setting} declarations give them (flag, environment name, default, description), so the listing cannot
 * drift from what {@link Config#load} accepts.
 *
 * <p>Applications look for help before loading their settings: a request for help must succeed even when the
 * environment holds a bad value or the flags a typo, and must start nothing.
 */
public final class Help {
    /** Descriptions wrap at this column: readable in an 100-column terminal, and in a pager. */
    static final int WIDTH = 100;
    private static final String INDENT = "      ";

    private Help() {}

    /** True when any argument is {@code --help} or {@code -h}; the rest of the line does not matter then. */
    public static boolean requested(String[] args) {
        return Arrays.stream(args).anyMatch(a -> a.equals("--help") || a.equals("-h"));
    }

    /** The usage text, a blank line, then one settings section. */
    public static String text(String usage, Collection<Setting<?>> declared) {
        return usage.stripTrailing() + "\n\n" + settings("Settings", declared);
    }

    /**
     * One settings section: a heading naming the layers a value may come from, then per setting
     * {@code --key (ENV_NAME), default VALUE} and its wrapped description. Secret defaults are not shown.
     */
    public static String settings(String heading, Collection<Setting<?>> declared) {
        StringBuilder sb = new StringBuilder(heading)
                .append(" (defaults < --config FILE or ").append(Config.CONFIG_FILE_ENV)
                .append(" < TALLY_* environment < --key=value flags):\n");
        for (Setting<?> s : declared) {
            String def = s.defaultValue()
                    .map(d -> s.isSecret() ? "default hidden (secret)" : d.isEmpty() ? "default empty" : "default " + d)
                    .orElse("required");
            sb.append("\n  --").append(s.key()).append(" (").append(s.envName()).append("), ").append(def).append('\n');
            wrap(s.doc(), sb);
        }
        return sb.toString();
    }

    private static void wrap(String text, StringBuilder sb) {
        int column = 0;
        for (String word : text.trim().split("\\s+")) {
            if (column > 0 && column + 1 + word.length() > WIDTH) {
                sb.append('\n');
                column = 0;
            }
            if (column == 0) {
                sb.append(INDENT);
                column = INDENT.length();
            } else {
                sb.append(' ');
                column++;
            }
            sb.append(word);
            column += word.length();
        }
        sb.append('\n');
    }
}
