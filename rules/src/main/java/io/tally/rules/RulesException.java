package io.tally.rules;

import java.util.List;

/** Every problem of a rule file, reported together. */
public final class RulesException extends RuntimeException {
    private final List<String> problems;

    public RulesException(List<String> problems) {
        this("Invalid grade rules", problems);
    }

    /** {@code what}: the kind of file, so a sources file's problems are not reported as the rules'. */
    public RulesException(String what, List<String> problems) {
        super(what + ":\n  - " + String.join("\n  - ", problems));
        this.problems = List.copyOf(problems);
    }

    public List<String> problems() {
        return problems;
    }
}
