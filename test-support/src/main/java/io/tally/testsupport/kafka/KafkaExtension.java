package io.tally.testsupport.kafka;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/** Hands a test (constructor, lifecycle or test method parameter) the broker of this test JVM. */
public final class KafkaExtension implements ParameterResolver {
    @Override
    public boolean supportsParameter(ParameterContext p, ExtensionContext e) {
        return p.getParameter().getType() == TestKafka.class;
    }

    @Override
    public Object resolveParameter(ParameterContext p, ExtensionContext e) {
        return TestKafka.get();
    }
}
