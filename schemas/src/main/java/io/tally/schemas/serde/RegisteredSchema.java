package io.tally.schemas.serde;

import org.apache.avro.Schema;

/** One version of a subject as the registry knows it: its global id, its version within the subject and the schema. */
public record RegisteredSchema(String subject, int id, int version, Schema schema) {}
