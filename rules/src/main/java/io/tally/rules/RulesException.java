package io.tally.rules;

import java.util.List;

/** Every problem of a rule file, reported together. */
public final class RulesException extends RuntimeException {
    private final List<String> problems;

    public RulesException(List<String> problems) {
        super("Invalid grade rules:\n  - " + String.join("\n  - ", problems));
        this.problems = List.copyOf(problems);
    }

    public List<String> problems() {
        return problems;
    }
}
