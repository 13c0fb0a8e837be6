'use strict';

// Settings: defaults < environment (TALLY_COSMOS_*) < command-line flags.

const path = require('path');

// <repo>/local/cosmos/src -> <repo>
const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');

const SETTINGS = [
  { key: 'host', flag: '--host', env: 'TALLY_COSMOS_HOST', def: '127.0.0.1', parse: parseHost,
    doc: 'address the HTTPS Cosmos listener binds to' },
  { key: 'port', flag: '--port', env: 'TALLY_COSMOS_PORT', def: 8081, parse: parsePort,
    doc: 'HTTPS Cosmos port (0 = any free port)' },
  { key: 'controlPort', flag: '--control-port', env: 'TALLY_COSMOS_CONTROL_PORT', def: 8082, parse: parsePort,
    doc: 'plain-HTTP control port on 127.0.0.1 (0 = any free port)' },
  { key: 'tlsDir', flag: '--tls-dir', env: 'TALLY_COSMOS_TLS_DIR', def: path.join(REPO_ROOT, '.tally', 'cosmos', 'tls'),
    parse: (v) => path.resolve(v), doc: 'where cert.pem, key.pem and truststore.p12 are kept' },
  { key: 'throughput', flag: '--throughput', env: 'TALLY_COSMOS_THROUGHPUT', def: null, parse: parseThroughput,
    doc: 'provisioned RU/s per container (unset or 0 = unlimited)' },
];

class ConfigError extends Error {}

function parsePort(v, name) {
  const n = Number(v);
  if (!/^\d+$/.test(String(v).trim()) || n > 65535) throw new ConfigError(`${name}: not a port number: ${JSON.stringify(v)}`);
  return n;
}

function parseHost(v, name) {
  if (!String(v).trim()) throw new ConfigError(`${name}: empty host`);
  return String(v).trim();
}

function parseThroughput(v, name) {
  const s = String(v).trim();
  if (s === '') return null;
  const n = Number(s);
  if (!Number.isFinite(n) || n < 0) throw new ConfigError(`${name}: throughput must be a non-negative number of RU/s, got ${JSON.stringify(v)}`);
  return n === 0 ? null : n;
}

function usage() {
  const lines = ['Usage: node local/cosmos/bin/tally-cosmos.js [options]', '', 'Options (environment variable in brackets):'];
  for (const s of SETTINGS) {
    const def = s.def === null ? 'unset' : s.def;
    lines.push(`  ${`${s.flag} VALUE`.padEnd(24)} ${s.doc} [${s.env}] (default: ${def})`);
  }
  lines.push(`  ${'--help'.padEnd(24)} print this help`);
  return lines.join('\n');
}

// -> { help: true } or the resolved settings.
function parseConfig(argv, env) {
  const values = {};
  for (const s of SETTINGS) {
    values[s.key] = s.def;
    if (env[s.env] !== undefined && env[s.env] !== '') values[s.key] = s.parse(env[s.env], s.env);
  }
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === '--help' || arg === '-h') return { help: true };
    const eq = arg.indexOf('=');
    const flag = eq >= 0 ? arg.slice(0, eq) : arg;
    const setting = SETTINGS.find((s) => s.flag === flag);
    if (!setting) throw new ConfigError(`unknown option ${JSON.stringify(arg)}\n\n${usage()}`);
    let raw;
    if (eq >= 0) raw = arg.slice(eq + 1);
    else {
      if (i + 1 >= argv.length) throw new ConfigError(`${flag} needs a value`);
      raw = argv[(i += 1)];
    }
    values[setting.key] = setting.parse(raw, flag);
  }
  return { ...values, controlHost: '127.0.0.1', repoRoot: REPO_ROOT };
}

module.exports = { parseConfig, usage, ConfigError, REPO_ROOT };
