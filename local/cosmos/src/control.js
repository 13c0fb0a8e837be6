'use strict';

// The control listener: plain HTTP on 127.0.0.1 only, on its own port, so
// nothing a Cosmos client sends can reach it. Tests and benchmarks use it to
// inject faults, set throughput and read counters. README.md documents the API.

const http = require('http');
const { readJson, BodyError } = require('./http-util');
const { FaultSpecError } = require('./faults');
const { LoopMonitor } = require('./loop-monitor');

const LATENCY_RULE_ID = 'latency';

function createControlServer({ faults, stats, throughput, info, initialThroughput, loop = new LoopMonitor(), entra }) {
  const startedAt = Date.now();

  function send(res, status, body) {
    const payload = Buffer.from(`${JSON.stringify(body, null, 2)}\n`);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': payload.length });
    res.end(payload);
  }

  function setThroughput(body) {
    if (!body || typeof body !== 'object') throw new BodyError(400, 'expected {"ruPerSecond": N, "database"?: "...", "container"?: "..."}');
    const { ruPerSecond, database, container } = body;
    if (ruPerSecond === undefined) throw new BodyError(400, 'ruPerSecond is required (null or 0 = unlimited)');
    if ((database === undefined) !== (container === undefined)) throw new BodyError(400, 'give both database and container, or neither');
    try {
      if (database !== undefined) {
        // For one container, null falls back to the default and 0 means unlimited.
        throughput.setContainer(`${database}/${container}`, ruPerSecond === null ? null : Number(ruPerSecond));
      } else {
        throughput.setDefault(ruPerSecond);
      }
    } catch (e) {
      throw new BodyError(400, e.message);
    }
    return throughput.snapshot();
  }

  function setLatency(body) {
    const delayMs = body && body.delayMs;
    if (!Number.isInteger(delayMs) || delayMs < 0) throw new BodyError(400, 'expected {"delayMs": N} with N >= 0');
    faults.remove(LATENCY_RULE_ID);
    if (delayMs === 0) return { delayMs: 0 };
    const spec = { id: LATENCY_RULE_ID, delayMs };
    if (body.kind !== undefined) spec.kind = body.kind;
    return faults.add(spec);
  }

  // Tokens a client would never get from the token endpoint (expired, foreign key, other audience), for tests.
  function mintToken(body = {}) {
    const num = (v, name) => {
      if (v === undefined) return undefined;
      if (!Number.isInteger(v)) throw new BodyError(400, `${name} must be an integer number of seconds`);
      return v;
    };
    const { token, expiresOn } = entra.issue({
      tenant: body.tenant,
      clientId: body.clientId,
      audience: body.audience,
      lifetimeS: num(body.lifetimeSeconds, 'lifetimeSeconds'),
      notBeforeS: num(body.notBeforeSeconds, 'notBeforeSeconds'),
      foreignKey: body.signWithForeignKey === true,
      issuer: body.issuer,
    });
    return { accessToken: token, expiresOn };
  }

  async function route(req) {
    const path = req.url.split('?')[0].replace(/\/+$/, '') || '/';
    const m = req.method;
    if (m === 'GET' && path === '/health') {
      return [200, { status: 'ok', pid: process.pid, uptimeMs: Date.now() - startedAt, ...info() }];
    }
    if (m === 'GET' && path === '/stats') return [200, { ...stats.snapshot(), loop: loop.snapshot() }];
    if (m === 'GET' && path === '/loop') return [200, loop.snapshot()];
    if (m === 'POST' && path === '/loop/reset') {
      loop.reset();
      return [200, { reset: true }];
    }
    if ((m === 'POST' && path === '/stats/reset') || (m === 'DELETE' && path === '/stats')) {
      stats.reset();
      return [200, { reset: true }];
    }
    if (m === 'GET' && path === '/faults') return [200, { rules: faults.list() }];
    if (m === 'POST' && path === '/faults') {
      const body = await readJson(req);
      const specs = Array.isArray(body) ? body : [body];
      try {
        return [201, { rules: specs.map((s) => faults.add(s)) }];
      } catch (e) {
        if (e instanceof FaultSpecError) throw new BodyError(400, e.message);
        throw e;
      }
    }
    if (m === 'DELETE' && path === '/faults') return [200, { cleared: faults.clear() }];
    const one = /^\/faults\/([^/]+)$/.exec(path);
    if (one && m === 'DELETE') {
      const id = decodeURIComponent(one[1]);
      return faults.remove(id) ? [200, { removed: id }] : [404, { error: `no rule ${id}` }];
    }
    if (m === 'GET' && path === '/throughput') return [200, throughput.snapshot()];
    if ((m === 'PUT' || m === 'POST') && path === '/throughput') return [200, setThroughput(await readJson(req))];
    if ((m === 'PUT' || m === 'POST') && path === '/latency') return [200, setLatency(await readJson(req))];
    if (m === 'DELETE' && path === '/latency') {
      faults.remove(LATENCY_RULE_ID);
      return [200, { delayMs: 0 }];
    }
    if (entra && m === 'GET' && path === '/entra') return [200, entra.snapshot()];
    if (entra && m === 'POST' && path === '/entra/clients') {
      const body = (await readJson(req)) || {};
      try {
        entra.registerClient(body.clientId, body.clientSecret);
      } catch (e) {
        throw new BodyError(400, e.message);
      }
      return [201, { clientId: body.clientId, authorityHost: `${entra.baseUrl}/` }];
    }
    if (entra && m === 'POST' && path === '/entra/tokens') return [201, mintToken(await readJson(req))];
    if (m === 'POST' && path === '/reset') {
      faults.clear();
      stats.reset();
      throughput.setDefault(initialThroughput);
      for (const key of Object.keys(throughput.snapshot().containers)) throughput.setContainer(key, null);
      throughput.reset();
      return [200, { reset: true }];
    }
    return [404, { error: `no control route ${m} ${path}` }];
  }

  return http.createServer((req, res) => {
    route(req)
      .then(([status, body]) => send(res, status, body))
      .catch((e) => send(res, e instanceof BodyError ? e.status : 500, { error: e.message }));
  });
}

module.exports = { createControlServer, LATENCY_RULE_ID };
