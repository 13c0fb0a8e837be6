package io.tally.ingest.source;

import io.tally.config.Config;
import io.tally.config.ConfigException;
import io.tally.config.Setting;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** The arguments of a {@code rules} command: {@code --key=value} settings, and the files named around them. */
public record CommandArgs(List<String> flags, List<String> files) {
    public static CommandArgs split(String[] args) {
        List<String> flags = new ArrayList<>();
        List<String> files = new ArrayList<>();
        for (String a : args) (a.startsWith("--") ? flags : files).add(a);
        return new CommandArgs(List.copyOf(flags), List.copyOf(files));
    }

    /** The settings from the flags and {@code env}, or null after saying on {@code err} why they are invalid. */
    public Config config(List<Setting<?>> settings, Map<String, String> env, PrintStream err) {
        try {
            return Config.load(settings, List.of(), flags.toArray(String[]::new), env);
        } catch (ConfigException e) {
            err.println(e.getMessage());
            return null;
        }
    }
}
