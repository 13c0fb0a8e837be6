package io.tally.read;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The path templates the routes serve, so that a request no route took can be told apart: a known path
 * asked with another method (405) or a path nobody serves (404). A {@code {name}} matches one path segment,
 * possibly empty, as in Reactor Netty's own templates; the query string plays no part.
 * Filled while the routes are registered, read-only afterwards.
 */
final class KnownPaths {
    /** Every route is GET only. */
    static final String ALLOW = "GET";
    private static final Pattern VARIABLE = Pattern.compile("\\{[^/]+?}");

    private final List<Pattern> templates = new ArrayList<>();

    /** Remembers {@code template} and returns it, to register the route with. */
    String add(String template) {
        StringBuilder regex = new StringBuilder("^");
        int from = 0;
        var m = VARIABLE.matcher(template);
        while (m.find()) {
            regex.append(Pattern.quote(template.substring(from, m.start()))).append("[^/]*");
            from = m.end();
        }
        regex.append(Pattern.quote(template.substring(from))).append('$');
        templates.add(Pattern.compile(regex.toString()));
        return template;
    }

    /** True when the path of {@code uri} (a request target, query and fragment ignored) is one of the templates. */
    boolean matches(String uri) {
        int end = uri.length();
        int q = uri.indexOf('?');
        if (q >= 0) end = q;
        int h = uri.indexOf('#');
        if (h >= 0 && h < end) end = h;
        String path = uri.substring(0, end);
        return templates.stream().anyMatch(t -> t.matcher(path).matches());
    }
}
