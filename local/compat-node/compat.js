#!/usr/bin/env node
// Cross-check for Tally's Java Avro serde: Confluent's own Node client (@confluentinc/schemaregistry, avsc
// underneath) decodes bytes that Tally encoded and encodes events that Tally then decodes, through the same
// schema registry. Driven by tests/.../serde/ConfluentNodeCompatibilityIT; usable by hand as well.
//
//   node compat.js --registry http://127.0.0.1:8081 < request.json > response.json
//
// request:  {"decode": [{"topic": "t", "base64": "AAAAAAE..."}],
//            "encode": [{"topic": "t", "event": {...}}]}
// response: {"decoded": [{...event...} | {"error": "..."}], "encoded": ["AAAAAAE..." | {"error": "..."}]}
//
// Events in JSON: decimal amounts are strings with exactly the schema's scale ("1234.5600"), timestamp-millis
// fields are ISO-8601 strings, nullable fields are plain values or null. Encoding uses the subject's latest
// registered schema (useLatestVersion, no auto-registration), which is what Tally registered.
'use strict';

const avro = require('avsc');
const {
  SchemaRegistryClient, AvroSerializer, AvroDeserializer, SerdeType,
} = require('@confluentinc/schemaregistry');

/** Avro decimal (bytes, two's complement big-endian unscaled value) <-> decimal string with `scale` digits. */
class DecimalAsString extends avro.types.LogicalType {
  constructor(attrs, opts) {
    super(attrs, opts);
    this._scale = attrs.scale || 0;
    this._precision = attrs.precision;
  }

  _fromValue(buf) {
    let n = 0n;
    for (const b of buf) n = (n << 8n) | BigInt(b);
    if (buf.length > 0 && (buf[0] & 0x80)) n -= 1n << BigInt(8 * buf.length);
    const negative = n < 0n;
    const digits = (negative ? -n : n).toString().padStart(this._scale + 1, '0');
    const whole = digits.slice(0, digits.length - this._scale);
    const fraction = digits.slice(digits.length - this._scale);
    return (negative ? '-' : '') + whole + (this._scale > 0 ? '.' + fraction : '');
  }

  _toValue(value) {
    const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(String(value));
    if (!m) throw new Error(`not a decimal: ${value}`);
    const fraction = (m[3] || '');
    if (fraction.length > this._scale) throw new Error(`${value} has more than ${this._scale} fraction digits`);
    let n = BigInt(m[2] + fraction.padEnd(this._scale, '0'));
    if (m[1] === '-') n = -n;
    // Minimal two's complement big-endian, as Java's BigInteger.toByteArray() writes it.
    let len = 1;
    while (n < -(1n << BigInt(8 * len - 1)) || n >= (1n << BigInt(8 * len - 1))) len++;
    let u = n < 0n ? (1n << BigInt(8 * len)) + n : n;
    const buf = Buffer.alloc(len);
    for (let i = len - 1; i >= 0; i--) { buf[i] = Number(u & 0xffn); u >>= 8n; }
    return buf;
  }

  _resolve(type) {
    if (avro.Type.isType(type, 'logical:decimal') && type._scale === this._scale) return (v) => v;
    return undefined;
  }
}

/** timestamp-millis (long) <-> ISO-8601 string. */
class TimestampMillisAsIso extends avro.types.LogicalType {
  _fromValue(millis) { return new Date(Number(millis)).toISOString(); }

  _toValue(iso) {
    const ms = typeof iso === 'number' ? iso : Date.parse(iso);
    if (Number.isNaN(ms)) throw new Error(`not an ISO timestamp: ${iso}`);
    return ms;
  }

  _resolve(type) {
    if (avro.Type.isType(type, 'long', 'logical:timestamp-millis')) return (v) => v;
    return undefined;
  }
}

const LOGICAL_TYPES = { decimal: DecimalAsString, 'timestamp-millis': TimestampMillisAsIso };

function args(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--registry') out.registry = argv[++i];
  }
  if (!out.registry) throw new Error('usage: compat.js --registry <url> < request.json');
  return out;
}

async function readStdin() {
  const chunks = [];
  for await (const c of process.stdin) chunks.push(c);
  return Buffer.concat(chunks).toString('utf8');
}

async function main() {
  const { registry } = args(process.argv.slice(2));
  const request = JSON.parse(await readStdin());
  const client = new SchemaRegistryClient({ baseURLs: [registry], maxRetries: 1 });
  const deserializer = new AvroDeserializer(client, SerdeType.VALUE, { logicalTypes: LOGICAL_TYPES });
  const serializer = new AvroSerializer(client, SerdeType.VALUE,
    { useLatestVersion: true, autoRegisterSchemas: false, logicalTypes: LOGICAL_TYPES });

  const decoded = [];
  for (const item of request.decode || []) {
    try {
      decoded.push(await deserializer.deserialize(item.topic, Buffer.from(item.base64, 'base64')));
    } catch (e) {
      decoded.push({ error: String(e && e.message || e) });
    }
  }
  const encoded = [];
  for (const item of request.encode || []) {
    try {
      encoded.push((await serializer.serialize(item.topic, item.event)).toString('base64'));
    } catch (e) {
      encoded.push({ error: String(e && e.message || e) });
    }
  }
  process.stdout.write(JSON.stringify({ decoded, encoded }) + '\n');
}

main().catch((e) => {
  process.stderr.write(`compat.js failed: ${e && e.stack || e}\n`);
  process.exit(1);
});
