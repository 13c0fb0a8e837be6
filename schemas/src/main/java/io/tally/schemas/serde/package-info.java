/**
 * Avro in the Confluent Schema Registry wire format, without Confluent's libraries: a registry client
 * ({@link io.tally.schemas.serde.SchemaRegistryClient}), Kafka serializer, deserializer and serdes for
 * specific and generic records, configured with Confluent's setting names
 * ({@link io.tally.schemas.serde.AvroSerdeConfig}). Interoperates byte for byte with Confluent's
 * serializers (checked against Confluent's Node client in ConfluentNodeCompatibilityIT).
 *
 * <p>Errors: registry failures are {@link io.tally.schemas.serde.SchemaRegistryException} (with a
 * {@code Kind} and {@code isRetriable()}); undecodable records are
 * {@link io.tally.schemas.serde.AvroDecodeException} (with a {@code Problem}, coordinates and
 * {@code isBadInput()}). Both extend Kafka's SerializationException.
 */
package io.tally.schemas.serde;
