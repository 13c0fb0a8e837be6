package io.tally.schemas.serde;

import io.tally.schemas.avro.TransactionEvent;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.Map;

final class SampleEvents {
    private SampleEvents() {}

    static TransactionEvent v1() {
        return TransactionEvent.newBuilder()
                .setTransactionId("tx-1").setEventTime(Instant.parse("2026-11-21T10:15:30.123Z"))
                .setDomain("shop").setCustomerId("c-1").setEmail(null).setPostalCode("10115")
                .setSku("sku-9").setMerchant("m-1").setChannel("WEB")
                .setAmount(new BigDecimal("1234.5600")).setCurrency("EUR").setStatus("APPROVED")
                .setAttributes(Map.of("risk", "low"))
                .build();
    }
}
