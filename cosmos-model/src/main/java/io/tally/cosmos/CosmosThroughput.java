package io.tally.cosmos;

import com.azure.cosmos.models.ThroughputProperties;
import io.tally.config.Config;
import io.tally.config.Setting;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The throughput Tally gives the bucket container when it creates it ({@code cosmos.create-if-missing}). An existing
 * container keeps what it has: changing throughput is a control-plane operation (Azure CLI, Bicep, portal).
 */
public record CosmosThroughput(Mode mode, int ruPerSecond) {

    public enum Mode { MANUAL, AUTOSCALE, NONE }

    // The service's own bounds for a dedicated container: manual from 400 RU/s in steps of 100, autoscale from a
    // maximum of 1,000 RU/s in steps of 1,000 (it then scales between a tenth of the maximum and the maximum).
    static final int MANUAL_MIN = 400;
    static final int MANUAL_STEP = 100;
    static final int AUTOSCALE_MIN = 1000;
    static final int AUTOSCALE_STEP = 1000;

    public static final Setting<String> MODE = Setting.string("cosmos.throughput", "manual",
            "Throughput of the container when Tally creates it: `manual` (fixed `cosmos.throughput.ru-per-second`), "
                    + "`autoscale` (scales between a tenth of `cosmos.throughput.ru-per-second` and it), or `none` (no "
                    + "throughput of its own: the database's shared throughput, or provisioned elsewhere). An existing "
                    + "container keeps its throughput.")
            .validate(v -> List.of("manual", "autoscale", "none").contains(v.trim().toLowerCase(Locale.ROOT)),
                    "must be manual, autoscale or none");
    public static final Setting<Integer> RU_PER_SECOND = Setting.integer("cosmos.throughput.ru-per-second", 400,
            "manual: the container's RU/s (>= 400, a multiple of 100); autoscale: its maximum RU/s (>= 1000, a multiple "
                    + "of 1000); ignored with `none`. docs/scaling.md sizes it.");

    public static final List<Setting<?>> ALL = List.of(MODE, RU_PER_SECOND);

    static CosmosThroughput from(Config c, List<String> problems) {
        CosmosThroughput t = new CosmosThroughput(Mode.valueOf(c.get(MODE).trim().toUpperCase(Locale.ROOT)), c.get(RU_PER_SECOND));
        int ru = t.ruPerSecond;
        switch (t.mode) {
            case MANUAL -> {
                if (ru < MANUAL_MIN || ru % MANUAL_STEP != 0) {
                    problems.add(RU_PER_SECOND.key() + " (" + ru + ") must be >= " + MANUAL_MIN + " and a multiple of "
                            + MANUAL_STEP + " with " + MODE.key() + "=manual");
                }
            }
            case AUTOSCALE -> {
                if (ru < AUTOSCALE_MIN || ru % AUTOSCALE_STEP != 0) {
                    problems.add(RU_PER_SECOND.key() + " (" + ru + ") is the autoscale maximum: it must be >= " + AUTOSCALE_MIN
                            + " and a multiple of " + AUTOSCALE_STEP + " with " + MODE.key() + "=autoscale");
                }
            }
            case NONE -> { }
        }
        return t;
    }

    /** What to ask for at creation; empty = no dedicated throughput (the database's shared throughput applies). */
    public Optional<ThroughputProperties> properties() {
        return switch (mode) {
            case MANUAL -> Optional.of(ThroughputProperties.createManualThroughput(ruPerSecond));
            case AUTOSCALE -> Optional.of(ThroughputProperties.createAutoscaledThroughput(ruPerSecond));
            case NONE -> Optional.empty();
        };
    }

    public String describe() {
        return switch (mode) {
            case MANUAL -> ruPerSecond + " RU/s (manual)";
            case AUTOSCALE -> "autoscale up to " + ruPerSecond + " RU/s";
            case NONE -> "no dedicated throughput";
        };
    }
}
