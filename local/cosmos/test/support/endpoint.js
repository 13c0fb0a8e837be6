'use strict';

// Both listeners in-process on free ports, with a fresh TLS directory, and
// clients shaped like the SDK's requests: what the HTTP-level tests share.

const fs = require('fs');
const os = require('os');
const path = require('path');
const https = require('https');
const http = require('http');
const { ensureTls } = require('../../src/tls');
const { createCosmosServer } = require('../../src/server');
const { createControlServer } = require('../../src/control');
const { FaultRules } = require('../../src/faults');
const { Stats } = require('../../src/stats');
const { ThroughputBudget } = require('../../src/throughput');
const { LoopMonitor } = require('../../src/loop-monitor');
const { EntraIssuer } = require('../../src/entra');

function collect(res, parse, resolve) {
  const chunks = [];
  res.on('data', (c) => chunks.push(c));
  res.on('end', () => resolve(parse(Buffer.concat(chunks).toString())));
}

async function startEndpoint() {
  const tlsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tally-cosmos-test-'));
  const tls = ensureTls(tlsDir);
  const faults = new FaultRules();
  const stats = new Stats();
  const throughput = new ThroughputBudget();
  const loop = new LoopMonitor();
  const entra = new EntraIssuer();
  const cosmos = createCosmosServer({ cert: tls.certPem, key: tls.keyPem, faults, stats, throughput, loop, entra });
  const control = createControlServer({ faults, stats, throughput, loop, entra, initialThroughput: null, info: () => ({}) });
  await new Promise((r) => cosmos.listen(0, '127.0.0.1', r));
  await new Promise((r) => control.listen(0, '127.0.0.1', r));
  const base = `https://127.0.0.1:${cosmos.address().port}`;
  const controlBase = `http://127.0.0.1:${control.address().port}`;
  const agent = new https.Agent({ ca: tls.certPem, keepAlive: true });

  function call(method, p, body, headers = {}) {
    return new Promise((resolve, reject) => {
      const payload = body === undefined ? null : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
      const req = https.request(`${base}${p}`, { method, agent, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
        collect(res, (text) => ({ status: res.statusCode, headers: res.headers, body: text ? JSON.parse(text) : null }), resolve);
      });
      req.on('error', reject);
      req.end(payload);
    });
  }

  function controlCall(method, p, body) {
    return new Promise((resolve, reject) => {
      const req = http.request(`${controlBase}${p}`, { method, headers: { 'content-type': 'application/json' } }, (res) => {
        collect(res, (text) => ({ status: res.statusCode, body: JSON.parse(text) }), resolve);
      });
      req.on('error', reject);
      req.end(body === undefined ? null : JSON.stringify(body));
    });
  }

  function close() {
    agent.destroy();
    cosmos.close();
    control.close();
    loop.stop();
    fs.rmSync(tlsDir, { recursive: true, force: true });
  }

  return { call, controlCall, close, loop, entra, base };
}

const pk = (v) => ({ 'x-ms-documentdb-partitionkey': JSON.stringify([v]) });

module.exports = { startEndpoint, pk };
