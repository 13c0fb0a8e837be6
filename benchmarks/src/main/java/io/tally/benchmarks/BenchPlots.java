package io.tally.benchmarks;

import com.fasterxml.jackson.databind.JsonNode;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * Line plots of a benchmark's time series: one PNG per chart ({@code NAME-CHART.png}, 800x400), every
 * series of the chart as a line over seconds since its scenario began. A chart whose series have two
 * units gets a second y axis on the right. Needs headless AWT ({@code -Djava.awt.headless=true}).
 */
final class BenchPlots {
    static final int WIDTH = 800;
    static final int HEIGHT = 400;

    record Plot(String chart, Path file) {}

    private BenchPlots() {}

    /**
     * Writes the charts of {@code series} (BenchResults' array) into {@code dir}, replacing the benchmark's older plots;
     * {@code axes} names a chart's x axis where it is not seconds ({@link BenchResults#xAxis}).
     */
    static List<Plot> render(String benchmark, JsonNode series, JsonNode axes, Path dir) throws IOException {
        Files.createDirectories(dir);
        try (Stream<Path> old = Files.list(dir)) {
            for (Path p : old.filter(p -> p.getFileName().toString().startsWith(benchmark + "-") && p.toString().endsWith(".png")).toList()) {
                Files.delete(p);
            }
        }
        Map<String, List<JsonNode>> byChart = new LinkedHashMap<>();
        for (JsonNode s : series) byChart.computeIfAbsent(s.path("chart").asText(), k -> new ArrayList<>()).add(s);
        List<Plot> plots = new ArrayList<>();
        for (Map.Entry<String, List<JsonNode>> e : byChart.entrySet()) {
            Path file = dir.resolve(benchmark + "-" + slug(e.getKey()) + ".png");
            BitmapEncoder.saveBitmap(chart(e.getKey(), e.getValue(), axes.path(e.getKey())), file.toString(), BitmapEncoder.BitmapFormat.PNG);
            plots.add(new Plot(e.getKey(), file));
        }
        return plots;
    }

    private static XYChart chart(String title, List<JsonNode> series, JsonNode xAxis) {
        XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT).title(title).xAxisTitle(xAxis.path("title").asText("seconds")).build();
        boolean points = xAxis.path("points").asBoolean(false);
        if (xAxis.path("log").asBoolean(false)) chart.getStyler().setXAxisLogarithmic(true);
        // A curve over a few settings has no corner sure to be empty (cost falls, freshness rises): legend outside.
        chart.getStyler().setLegendPosition(points ? Styler.LegendPosition.OutsideS : Styler.LegendPosition.InsideNW)
                .setChartBackgroundColor(Color.WHITE).setLegendBackgroundColor(new Color(255, 255, 255, 200));
        chart.getStyler().setPlotGridLinesColor(new Color(220, 220, 220)).setYAxisDecimalPattern("#,##0.##");
        List<String> units = new ArrayList<>();
        for (JsonNode s : series) {
            String unit = s.path("unit").asText();
            if (!units.contains(unit)) units.add(unit);
            int group = Math.min(1, units.indexOf(unit)); // XChart draws two y axes at most
            List<Double> x = new ArrayList<>();
            List<Double> y = new ArrayList<>();
            for (JsonNode p : s.path("points")) {
                x.add(p.get(0).asDouble());
                y.add(p.get(1).asDouble());
            }
            if (x.isEmpty()) continue;
            XYSeries line = chart.addSeries(s.path("name").asText() + (units.size() > 1 ? " (" + unit + ")" : ""), x, y);
            line.setMarker(points ? SeriesMarkers.CIRCLE : SeriesMarkers.NONE);
            line.setYAxisGroup(group);
        }
        chart.setYAxisGroupTitle(0, units.isEmpty() ? "" : units.get(0));
        if (units.size() > 1) {
            chart.setYAxisGroupTitle(1, String.join(", ", units.subList(1, units.size())));
            chart.getStyler().setYAxisGroupPosition(1, Styler.YAxisPosition.Right);
        }
        return chart;
    }

    static String slug(String chart) {
        return chart.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "-").replaceAll("(^-|-$)", "");
    }
}
