package io.tally.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class EntityBucketJsonTest {
    private static final BigDecimal HUGE = new BigDecimal("123456789012345678901234567890.1234");
    private static final String[] ODD_QUALIFIERS = {"sku|7", "a:b:c", "ü€😀 \"q\"\\", "10.0000", ""};

    private static Aggregate spend(String sum, long count, String min, String max) {
        return new Aggregate(new BigDecimal(sum), count, new BigDecimal(min), new BigDecimal(max));
    }

    private static EntityBucket mainDocument() {
        EntityBucket d = EntityBucket.main("shop|c-ß|1", TimeUnit.DAY, 20_419, "2025-11-27T00:00:00Z");
        d.addGrade("spend-per-customer", spend("120.5000", 3, "10.5000", "80.0000"), 3_024_000);
        d.addGrade("spend-trailing-zeros", spend("10.0000", 1, "0.0000", "100.0000"), 60);
        d.addGrade("huge", new Aggregate(HUGE, 2, HUGE.negate(), HUGE), 60);
        d.addGrade("orders", new Aggregate(null, 4, null, null), 604_800);
        for (String q : ODD_QUALIFIERS) d.addQualified("spend-per-customer-sku", q, new Aggregate(new BigDecimal("0.0001"), 1, null, null), 60);
        d.countSpilled(7, 60);
        d.spill("other-rule", EntityBucketLayout.SPILL_PAGES);
        d.stamp("2025-11-27T10:00:00.123Z");
        return d;
    }

    private static EntityBucket spillPage() {
        EntityBucket p = EntityBucket.page("shop|c-ß|1", TimeUnit.HOUR, -3, "1969-12-31T21:00:00Z", "other-rule", 15);
        Map<String, Aggregate> values = new java.util.TreeMap<>();
        for (String q : ODD_QUALIFIERS) values.put(q, new Aggregate(HUGE, 2, null, new BigDecimal("1.2300")));
        p.addSpilled(values, 3_024_000);
        return p;
    }

    private static String json(EntityBucket d) {
        return new String(EntityBucketJson.write(d), StandardCharsets.UTF_8);
    }

    private static EntityBucket read(String json) {
        return EntityBucketJson.read(json.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void aChangedDocumentIsEncodedAfreshAndAnUnchangedOneOnce() {
        EntityBucket d = mainDocument();
        byte[] first = EntityBucketJson.write(d);
        assertThat(EntityBucketJson.write(d)).as("unchanged: the same encoding").isSameAs(first);
        d.addGrade("spend", new Aggregate(BigDecimal.ONE, 1, BigDecimal.ONE, BigDecimal.ONE), 60);
        byte[] second = EntityBucketJson.write(d);
        assertThat(second).isNotSameAs(first);
        assertThat(EntityBucketJson.read(second).ver()).isEqualTo(d.ver());
    }

    @Test
    void theTreeOfAReadDocumentIsTheOneItWasReadFromUntilItChanges() {
        EntityBucket read = EntityBucketJson.read(EntityBucketJson.write(mainDocument()));
        assertThat(EntityBucketJson.tree(read)).isSameAs(EntityBucketJson.tree(read));
        read.stamp("2026-11-27T00:00:00Z");
        assertThat(EntityBucketJson.tree(read).get("updatedAt").asText()).isEqualTo("2026-11-27T00:00:00Z");
    }

    @Test
    void mainDocumentsAndSpillPagesRoundTripToTheSameBytesAndExactDecimals() {
        for (EntityBucket d : new EntityBucket[] {mainDocument(), spillPage()}) {
            EntityBucket back = EntityBucketJson.read(EntityBucketJson.write(d));
            assertThat(json(back)).isEqualTo(json(d));
            assertThat(back).usingRecursiveComparison().ignoringFields("changes", "source").isEqualTo(d); // encoding bookkeeping
            assertThat(back.views()).isEqualTo(d.views());
        }
        EntityBucket main = EntityBucketJson.read(EntityBucketJson.write(mainDocument()));
        assertThat(main.isPage()).isFalse();
        assertThat(main.page()).isEqualTo(-1);
        assertThat(main.ver()).isEqualTo(3 + 1 + 2 + 4 + ODD_QUALIFIERS.length + 7);
        assertThat(main.ttl()).as("the longest retention of its grades").isEqualTo(3_024_000);
        assertThat(main.spilled()).containsExactly(Map.entry("other-rule", 16));
        // Equal, not just comparable: a scale lost on the way would change the bytes Cosmos gets on the next write.
        assertThat(main.grades().get("spend-per-customer").sum()).isEqualTo(new BigDecimal("120.5000"));
        assertThat(main.grades().get("spend-trailing-zeros")).isEqualTo(spend("10.0000", 1, "0.0000", "100.0000"));
        assertThat(main.grades().get("huge")).isEqualTo(new Aggregate(HUGE, 2, HUGE.negate(), HUGE));
        assertThat(main.grades().get("orders")).isEqualTo(new Aggregate(null, 4, null, null));
        assertThat(main.qualified().get("spend-per-customer-sku")).containsOnlyKeys(ODD_QUALIFIERS);
        assertThat(main.grade("spend-per-customer-sku", "sku|7")).hasValueSatisfying(v -> {
            assertThat(v.id()).isEqualTo("spend-per-customer-sku:sku|7|day|20419");
            assertThat(v.grade()).isEqualTo("spend-per-customer-sku:sku|7");
            assertThat(v.sum()).isEqualTo(new BigDecimal("0.0001"));
            assertThat(v.ver()).isEqualTo(1);
        });

        EntityBucket page = EntityBucketJson.read(EntityBucketJson.write(spillPage()));
        assertThat(page.isPage()).isTrue();
        assertThat(page.rule()).isEqualTo("other-rule");
        assertThat(page.page()).isEqualTo(15);
        assertThat(page.id()).isEqualTo("hour|-3|other-rule|15");
        assertThat(page.ver()).isEqualTo(2L * ODD_QUALIFIERS.length);
        assertThat(page.qualified().get("other-rule").get("ü€😀 \"q\"\\")).isEqualTo(new Aggregate(HUGE, 2, null, new BigDecimal("1.2300")));
        assertThat(page.grade("other-rule", "a:b:c").orElseThrow().id()).isEqualTo("other-rule:a:b:c|hour|-3");
    }

    @Test
    void anHourNestsItsMinutesAndSaysNullOnceTheyMovedOut() {
        EntityBucket d = EntityBucket.main("p|e", TimeUnit.HOUR, 2, "1970-01-01T02:00:00Z");
        d.addMinute("velocity", 0, new Aggregate(new BigDecimal("99999999999999999.9999"), 2, null, null), 600);
        EntityBucket back = read(json(d));
        assertThat(back.nestsMinutes()).isTrue();
        assertThat(back.minute("velocity", 120).orElseThrow()).satisfies(v -> {
            assertThat(v.id()).isEqualTo("velocity|minute|120");
            assertThat(v.bucket()).isEqualTo("1970-01-01T02:00:00Z");
            assertThat(v.sum()).isEqualTo(new BigDecimal("99999999999999999.9999"));
            assertThat(v.ttl()).isEqualTo(600);
        });
        assertThat(back.minute("velocity", 60)).as("a minute of another hour").isEmpty();
        assertThat(back.views()).extracting(BucketDocument::id).containsExactly("velocity|minute|120");
        assertThat(EntityBucketJson.decode(json(d).getBytes(StandardCharsets.UTF_8)).minutes()).isEqualTo(back.minutes());

        d.spillMinutes();
        assertThat(json(d)).endsWith("\"spilled\":{},\"minutes\":null}");
        assertThat(read(json(d)).nestsMinutes()).isFalse();
        assertThat(EntityBucketJson.decode(json(d).getBytes(StandardCharsets.UTF_8)).nestsMinutes()).isFalse();
        EntityBucket older = read("{\"pk\":\"p|e\",\"id\":\"hour|2\",\"unit\":\"hour\",\"ver\":1,\"grades\":{\"a\":[1]}}");
        assertThat(older.nestsMinutes()).as("an hour written before minutes nested").isFalse();
        assertThat(EntityBucketJson.tree(older).has("minutes")).as("written back with an explicit null").isTrue();
        assertThat(EntityBucket.main("p|e", TimeUnit.DAY, 0, "x").nestsMinutes()).isFalse();
        assertThatThrownBy(() -> read("{\"pk\":\"p\",\"id\":\"hour|1\",\"ver\":1,\"minutes\":{\"a\":{\"60\":[1]}}}"))
                .hasMessageContaining("minute of the hour");
        assertThatThrownBy(() -> EntityBucketJson.decode("{\"pk\":\"p\",\"id\":\"hour|1\",\"ver\":1,\"minutes\":{\"a\":{\"07\":[1]}}}"
                .getBytes(StandardCharsets.UTF_8))).hasMessageContaining("minute of the hour");
    }

    @Test
    void aGradeIsStoredAsCountThenExactDecimalStringsInPlainNotation() {
        EntityBucket d = EntityBucket.main("p|e", TimeUnit.HOUR, 1, "1970-01-01T01:00:00Z");
        d.addGrade("all", spend("120.5000", 3, "10.5000", "80.0000"), 60);
        d.addGrade("count-only", new Aggregate(null, 4, null, null), 60);
        d.addGrade("sum-only", new Aggregate(new BigDecimal("5E+1"), 1, null, null), 60);
        d.addGrade("max-only", new Aggregate(null, 2, null, new BigDecimal("-0.0001")), 60);
        d.addQualified("per-sku", "s/1", new Aggregate(new BigDecimal("123456789012345678.99"), 7, null, null), 60);
        d.addMinute("all", 59, spend("1.5", 1, "1.5", "1.5"), 60);
        d.addMinute("all", 7, spend("2", 1, "2", "2"), 60);
        assertThat(json(d)).isEqualTo("{\"pk\":\"p|e\",\"id\":\"hour|1\",\"unit\":\"hour\",\"bucket\":\"1970-01-01T01:00:00Z\",\"ver\":19,"
                + "\"ttl\":60,\"grades\":{\"all\":[3,\"120.5000\",\"10.5000\",\"80.0000\"],\"count-only\":[4],"
                + "\"max-only\":[2,null,null,\"-0.0001\"],\"sum-only\":[1,\"50\"]},"
                + "\"qualified\":{\"per-sku\":{\"s/1\":[7,\"123456789012345678.99\"]}},\"spilled\":{},"
                + "\"minutes\":{\"all\":{\"7\":[1,\"2\",\"2\",\"2\"],\"59\":[1,\"1.5\",\"1.5\",\"1.5\"]}}}");
        // 20 significant digits: no double holds them, the string does.
        assertThat(read(json(d)).qualified().get("per-sku").get("s/1").sum()).isEqualTo(new BigDecimal("123456789012345678.99"));
    }

    @Test
    void aMapperThatBindsTheDocumentReadsTheSameValuesAsTheReader() throws Exception {
        // The Cosmos SDK's point reads bind EntityBucket with a Jackson mapper of its own: the same values must come out.
        com.fasterxml.jackson.databind.ObjectMapper sdkLike = new com.fasterxml.jackson.databind.ObjectMapper();
        EntityBucket d = mainDocument();
        EntityBucket bound = sdkLike.readValue(EntityBucketJson.write(d), EntityBucket.class);
        assertThat(bound.grades()).isEqualTo(d.grades());
        assertThat(bound.qualified()).isEqualTo(d.qualified());
        assertThat(bound.views()).isEqualTo(d.views());
        assertThat(sdkLike.readValue("[2,null,\"1.50\"]", Aggregate.class)).isEqualTo(new Aggregate(null, 2, new BigDecimal("1.50"), null));
        assertThatThrownBy(() -> sdkLike.readValue("[2,1.5]", Aggregate.class)).hasMessageContaining("a decimal is not a string");
    }

    @Test
    void aDocumentOfTheOlderObjectFormIsReadAndWrittenBackInTheArrayForm() {
        EntityBucket older = read("{\"pk\":\"p|e\",\"id\":\"day|1\",\"ver\":3,\"grades\":{\"g\":{\"sum\":12.50,\"count\":3}},\"qualified\":{},\"spilled\":{}}");
        assertThat(older.grades().get("g")).isEqualTo(new Aggregate(new BigDecimal("12.50"), 3, null, null));
        assertThat(EntityBucketJson.tree(older).get("grades").get("g").toString()).isEqualTo("[3,\"12.50\"]");
    }

    @Test
    void theStreamingDecodeAcceptsAndRefusesWhatTheTreeReaderDoes() {
        java.util.List<String> inputs = new java.util.ArrayList<>(java.util.List.of(json(mainDocument()), json(spillPage()),
                "{\"pk\":\"p|e\",\"id\":\"day|1\",\"ver\":3,\"grades\":{\"g\":{\"sum\":12.50,\"count\":3}}}",
                "{\"_ts\":1,\"spilled\":null,\"qualified\":{\"r\":{\"x|y\":[2,\"3.5000\"]}},\"grades\":{\"g\":[1]},\"ttl\":null,"
                        + "\"ver\":3,\"id\":\"day|1\",\"pk\":\"p|e\",\"_attachments\":{\"a\":[1,{\"b\":null}]}}",
                "{\"id\":\"day|1\",\"ver\":0,\"pk\":\"p|e\"}",
                "{\"pk\":\"p|e\",\"id\":\"day|1\",\"ver\":1,\"ttl\":4294967296}",
                "{\"pk\":7,\"id\":\"day|1\",\"ver\":1}",
                "{\"id\":\"day|1\",\"ver\":1}", "{\"pk\":\"p|e\",\"id\":\"day|1\",\"ver\":1.5}", "[1]", "null", "{not json",
                "{\"pk\":\"p|e\",\"id\":\"day|1\",\"ver\":1} {}",
                "{\"pk\":\"p|e\",\"id\":\"day|1\",\"ver\":1,\"grades\":{\"g\":[1,2.5]}}",
                "{\"pk\":\"p|e\",\"id\":\"day|1\",\"ver\":1,\"grades\":{\"g\":[1,\"x\"]}}",
                "{\"pk\":\"p|e\",\"id\":\"day|1\",\"ver\":1,\"grades\":{\"g\":[1,null,null,null,null]}}",
                "{\"pk\":\"p|e\",\"id\":\"day|1\",\"ver\":1,\"spilled\":{\"r\":\"x\"}}"));
        for (String in : inputs) {
            byte[] bytes = in.getBytes(StandardCharsets.UTF_8);
            EntityBucket viaTree;
            try {
                viaTree = EntityBucketJson.read(bytes);
            } catch (IllegalArgumentException refused) {
                assertThatThrownBy(() -> EntityBucketJson.decode(bytes)).as(in).isInstanceOf(IllegalArgumentException.class)
                        .hasMessage(refused.getMessage());
                continue;
            }
            EntityBucket streamed = EntityBucketJson.decode(bytes);
            assertThat(streamed).as(in).usingRecursiveComparison().ignoringFields("changes", "source").isEqualTo(viaTree);
            assertThat(json(streamed)).as(in).isEqualTo(json(viaTree));
        }
        assertThat(EntityBucketJson.decodesInOnePass(EntityBucketJson.write(mainDocument()))).as("what stage 5 stores").isTrue();
        assertThat(EntityBucketJson.decodesInOnePass(EntityBucketJson.write(spillPage()))).isTrue();
        assertThat(EntityBucketJson.decodesInOnePass(inputs.get(2).getBytes(StandardCharsets.UTF_8))).as("the older form").isFalse();
    }

    @Test
    void thePartsTheSinkWritesAreTheDocumentTheTreeReaderReadsAndRefuseWhatItRefuses() throws Exception {
        String hour = "{\"pk\":\"p|é\",\"id\":\"hour|1\",\"unit\":\"hour\",\"ver\":2,\"ttl\":60,\"updatedAt\":\"t\",\"grades\":{\"g\":[1,\"-0.0050\"]},"
                + "\"qualified\":{\"q\":{\"ü€😀 \\\"x\\\"\":[2,\"1.5\",null,\"7\"]}},\"spilled\":{\"r\":3},";
        java.util.List<String> inputs = java.util.List.of(json(mainDocument()), json(spillPage()),
                hour + "\"minutes\":{\"m\":{\"0\":[1,\"2.5\"],\"59\":[1]}}}", hour + "\"minutes\":null}",
                hour.substring(0, hour.length() - 1) + "}", // an hour of before nesting: written back with its explicit null
                hour + "\"minutes\":{\"m\":{\"60\":[1]}}}", hour + "\"minutes\":{\"m\":{\"07\":[1]}}}",
                "{\"pk\":\"p|e\",\"id\":\"day|1\",\"ver\":1,\"grades\":{\"g\":[1,\"5E+1\"]},\"qualified\":{},\"spilled\":{}}",
                "{\"pk\":\"p|e\",\"id\":\"day|1\",\"ver\":1,\"ver\":2,\"grades\":{},\"qualified\":{},\"spilled\":{}}",
                "{\"pk\":\"p|e\",\"id\":\"day|1\",\"ver\":3,\"grades\":{\"g\":{\"sum\":12.50,\"count\":3}}}",
                "{\"_ts\":1,\"pk\":\"p|e\",\"id\":\"day|1\",\"ver\":3,\"grades\":{},\"qualified\":{},\"spilled\":{},\"_x\":{\"a\":[1]}}",
                "{\"pk\":\"p|e\",\"id\":\"day|1\",\"ver\":1,\"grades\":{\"g\":[1,\"x\"]}}",
                "{\"pk\":\"p|e\",\"id\":\"day|1\",\"ver\":1,\"grades\":{\"g\":[1,\"1.\"]},\"qualified\":{},\"spilled\":{}}",
                "{\"pk\":\"p|e\",\"id\":\"day|1\",\"ver\":1} {}", "{not json", "[1]");
        com.fasterxml.jackson.databind.ObjectMapper mapper = new com.fasterxml.jackson.databind.ObjectMapper();
        int onePass = 0;
        for (String in : inputs) {
            byte[] bytes = in.getBytes(StandardCharsets.UTF_8);
            EntityBucket expected;
            try {
                expected = EntityBucketJson.read(bytes);
            } catch (IllegalArgumentException refused) {
                assertThatThrownBy(() -> EntityBucketJson.parts(bytes)).as(in).isInstanceOf(IllegalArgumentException.class)
                        .hasMessage(refused.getMessage());
                continue;
            }
            EntityBucketJson.Parts parts = EntityBucketJson.parts(bytes);
            if (parts.json().equals(in)) onePass++;
            com.fasterxml.jackson.databind.JsonNode canonical = mapper.readTree(EntityBucketJson.write(expected));
            assertThat(List.of(parts.pk(), parts.id(), parts.ver())).as(in).containsExactly(expected.pk(), expected.id(), expected.ver());
            assertThat(parts.ttl()).as(in).isEqualTo(expected.ttl());
            assertThat(parts.updatedAt()).as(in).isEqualTo(expected.updatedAt());
            assertThat(mapper.readTree(parts.grades())).as(in).isEqualTo(canonical.get("grades"));
            assertThat(mapper.readTree(parts.qualified())).as(in).isEqualTo(canonical.get("qualified"));
            assertThat(mapper.readTree(parts.spilled())).as(in).isEqualTo(canonical.get("spilled"));
            if (canonical.has("minutes")) assertThat(mapper.readTree(parts.minutes())).as(in).isEqualTo(canonical.get("minutes"));
            else assertThat(parts.minutes()).as(in).isNull();
            assertThat(EntityBucketJson.read(parts.whole().getBytes(StandardCharsets.UTF_8))).as(in).usingRecursiveComparison()
                    .withComparatorForType(BigDecimal::compareTo, BigDecimal.class) // "5E+1" is written back as "50"
                    .ignoringFields("changes", "source").isEqualTo(expected);
        }
        assertThat(onePass).as("the aggregation's shapes, unknown fields beside them included, in one pass").isEqualTo(5);
        byte[] notUtf8 = "{\"pk\":\"p|e\",\"id\":\"day|1\",\"ver\":1,\"grades\":{},\"qualified\":{\"q\":{\"x?\":[1]}},\"spilled\":{}}"
                .getBytes(StandardCharsets.UTF_8);
        notUtf8[notUtf8.length - 22] = (byte) 0xC3; // a lead byte without its continuation, in place of the '?'
        assertThat(EntityBucketJson.parts(notUtf8).qualified()).as("bytes that are not UTF-8: replaced, as the tree reader does")
                .isEqualTo(EntityBucketJson.tree(EntityBucketJson.read(notUtf8)).get("qualified").toString());
        byte[] replacement = "{\"pk\":\"p|e\",\"id\":\"day|1\",\"ver\":1,\"grades\":{},\"qualified\":{\"q\":{\"\uFFFD\":[1]}},\"spilled\":{}}"
                .getBytes(StandardCharsets.UTF_8);
        assertThat(EntityBucketJson.parts(replacement).qualified()).as("a replacement character that is data").isEqualTo("{\"q\":{\"\uFFFD\":[1]}}");
        assertThat(EntityBucketJson.parts(mainDocument()).whole()).isEqualTo(json(mainDocument()));
    }

    @Test
    void plainDecimalsAreWhatToPlainStringWrites() {
        for (String yes : new String[] {"0", "-0", "7", "120.50", "-0.0050", "123456789012345678901234567890.1234"}) {
            assertThat(EntityBucketJson.isPlainDecimal(yes.toCharArray(), 0, yes.length())).as(yes).isTrue();
        }
        for (String no : new String[] {"", "-", ".5", "1.", "5E+1", "+1", "1.2.3", "1,5", " 1", "NaN"}) {
            assertThat(EntityBucketJson.isPlainDecimal(no.toCharArray(), 0, no.length())).as(no).isFalse();
        }
    }

    @Test
    void readsFieldsInAnyOrderIgnoresUnknownOnesAndTakesExplicitNullsAsAbsent() {
        EntityBucket d = read("""
                {"_ts": 1732700000, "spilled": null, "qualified": {"r": {"x|y": {"max": null, "count": 2, "sum": 3.5000, "_x": [1]}}},
                 "grades": {"g": {"count": 1, "min": null, "sum": null}}, "ttl": null, "updatedAt": null, "ver": 3,
                 "rule": null, "page": null, "bucket": null, "unit": null, "id": "day|1", "pk": "p|e", "_etag": "\\"0\\"",
                 "_rid": "abc", "_attachments": {"a": {"b": null}}}
                """);
        assertThat(d.pk()).isEqualTo("p|e");
        assertThat(d.id()).isEqualTo("day|1");
        assertThat(d.ver()).isEqualTo(3);
        assertThat(d.isPage()).isFalse();
        assertThat(d.page()).isEqualTo(-1);
        assertThat(d.ttl()).isNull();
        assertThat(d.updatedAt()).isNull();
        assertThat(d.unit()).isNull();
        assertThat(d.bucket()).isNull();
        assertThat(d.grades()).containsExactly(Map.entry("g", new Aggregate(null, 1, null, null)));
        assertThat(d.qualified()).containsExactly(Map.entry("r", Map.of("x|y", new Aggregate(new BigDecimal("3.5000"), 2, null, null))));
        assertThat(d.spilled()).isEmpty();

        EntityBucket bare = read("{\"id\":\"day|1\",\"ver\":0,\"pk\":\"p|e\"}");
        assertThat(bare.grades()).isEmpty();
        assertThat(bare.qualified()).isEmpty();
        assertThat(json(bare)).isEqualTo("{\"pk\":\"p|e\",\"id\":\"day|1\",\"ver\":0,\"grades\":{},\"qualified\":{},\"spilled\":{}}");
    }

    @Test
    void refusesWhatIsNotAnEntityBucketAndSaysWhy() {
        assertThatThrownBy(() -> read("{\"id\":\"day|1\",\"ver\":1}")).isInstanceOf(IllegalArgumentException.class).hasMessage("no pk or id");
        assertThatThrownBy(() -> read("{\"pk\":\"p|e\",\"id\":null,\"ver\":1}")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("no pk or id");
        assertThatThrownBy(() -> read("{\"pk\":\"p|e\",\"id\":\"day|1\"}")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("no whole ver");
        assertThatThrownBy(() -> read("{\"pk\":\"p|e\",\"id\":\"day|1\",\"ver\":\"many\"}")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("no whole ver");
        assertThatThrownBy(() -> read("{\"pk\":\"p|e\",\"id\":\"day|1\",\"ver\":null}")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("no whole ver");
        assertThatThrownBy(() -> read("{\"pk\":\"p|e\",\"id\":\"day|1\",\"ver\":1.5}")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("no whole ver");
        assertThatThrownBy(() -> read("{\"pk\":\"p|e\",\"id\":\"day|1\",\"ver\":1,\"grades\":{\"g\":{\"count\":\"many\"}}}"))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("count is not a whole number");
        assertThatThrownBy(() -> read("{\"pk\":\"p|e\",\"id\":\"day|1\",\"ver\":1,\"ttl\":\"soon\"}"))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("ttl is not a whole number");
        assertThatThrownBy(() -> read("null")).isInstanceOf(IllegalArgumentException.class).hasMessage("not a JSON object");
        assertThatThrownBy(() -> read("[1]")).isInstanceOf(IllegalArgumentException.class).hasMessage("not a JSON object");
        assertThatThrownBy(() -> read("{not json")).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("Unexpected character");
        assertThatThrownBy(() -> read("{\"pk\":\"p|e\",\"id\":\"day|1\",\"ver\":1,\"grades\":[]}"))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("grades is not an object");
        assertThatThrownBy(() -> read("{\"pk\":\"p|e\",\"id\":\"day|1\",\"ver\":1,\"grades\":{\"g\":{\"count\":1,\"sum\":\"x\"}}}"))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("sum is not a number");
        for (String[] bad : new String[][] {
                {"[]", "grade g is not [count, sum, min, max]"}, {"[1,null,null,null,null]", "grade g is not [count, sum, min, max]"},
                {"[\"1\"]", "grade g: count is not a whole number"}, {"[1.5]", "grade g: count is not a whole number"},
                {"[1,2.5]", "grade g: a decimal is not a string"}, {"[1,\"x\"]", "grade g: a decimal is not a number"},
                {"\"1\"", "grade g is not an array"}}) {
            assertThatThrownBy(() -> read("{\"pk\":\"p|e\",\"id\":\"day|1\",\"ver\":1,\"grades\":{\"g\":" + bad[0] + "}}"))
                    .as(bad[0]).isInstanceOf(IllegalArgumentException.class).hasMessage(bad[1]);
        }
        assertThatThrownBy(() -> read("{\"pk\":\"p|e\",\"id\":\"day|1\",\"ver\":1,\"spilled\":{\"r\":\"x\"}}"))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("spilled page count is not a whole number");
    }

    /** The hand-written plain notation against BigDecimal's own, at the edges of its fast path and at random. */
    @Test
    void decimalsAreWrittenAsToPlainStringWritesThem() {
        java.util.List<BigDecimal> values = new java.util.ArrayList<>();
        for (String v : new String[] {"0", "0.0000", "-0.0001", "5", "-5", "0.5", "120.50", "80.0000", "999999999999999999",
                "-999999999999999999", "0.999999999999999999", "-0.000000000000000001", "1000000000000000000", "1E+3", "1E-19",
                "9223372036854775807", "-9223372036854775808", "123456789012345678901234567890.1234"}) {
            values.add(new BigDecimal(v));
        }
        java.util.Random random = new java.util.Random(42);
        for (int i = 0; i < 20_000; i++) {
            long unscaled = random.nextLong() >> random.nextInt(64);
            values.add(BigDecimal.valueOf(unscaled, random.nextInt(22) - 2));
        }
        for (BigDecimal v : values) {
            EntityBucket d = EntityBucket.main("p", TimeUnit.DAY, 1, "2025-11-27T00:00:00Z");
            d.addGrade("g", new Aggregate(v, 1, v, v), 60);
            String expected = "\"g\":[1,\"" + v.toPlainString() + "\",\"" + v.toPlainString() + "\",\"" + v.toPlainString() + "\"]";
            assertThat(json(d)).as("%s (unscaled %s, scale %d)", v, v.unscaledValue(), v.scale()).contains(expected);
            // plain notation has no negative scale: 1E+3 comes back as 1000, the same number
            BigDecimal back = EntityBucketJson.decode(EntityBucketJson.write(d)).grades().get("g").sum();
            if (v.scale() >= 0) assertThat(back).isEqualTo(v);
            else assertThat(back).isEqualByComparingTo(v);
        }
    }
}
