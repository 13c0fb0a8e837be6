'use strict';

// What every request to the Cosmos port goes through:
//
//   classify -> fault rules (delay / status / drop) -> Entra ID token check
//   -> handler -> response with RU charge and activity id -> stats
//
// The local token issuer's paths (entra.js) are answered first and are not
// Cosmos requests: no faults, no stats.
//
// The handlers return outcomes and never write the response themselves, so a
// fault, a thrown error and a normal answer all leave through send().

const crypto = require('crypto');
const docs = require('./documents');
const { classify, normalizePath } = require('./routing');
const { send, errorBody } = require('./responses');
const { header, sleep, readBody, BodyError } = require('./http-util');
const { issuerRoute, isControlPlaneWrite, controlPlaneRefusal } = require('./entra');

// handlers: { documents(req, info), metadata(req, res) } -> outcome
function createRequestPipeline({ handlers, faults, stats, loop, log, debug, entra }) {
  return async function handle(req, res) {
    const started = Date.now();
    const path = normalizePath(req.url);
    const issuer = entra && issuerRoute(req.method, path);
    if (issuer) {
      await answerIssuer(entra, issuer, req, res);
      if (debug) log(`${req.method} ${path} issuer -> ${res.statusCode} ${Date.now() - started} ms`);
      return;
    }
    const info = classify(req, path);
    const activityId = header(req, 'x-ms-activity-id') || crypto.randomUUID();
    const record = (status, outcome = {}) => {
      stats.record({
        kind: info.kind,
        status,
        charge: outcome.charge || 0,
        throttled: Boolean(outcome.throttled),
        injected: Boolean(outcome.injected),
        dropped: Boolean(outcome.dropped),
        requestBytes: req.bodyBytes || 0,
      });
      loop.recordRequest(info.kind);
      if (debug) log(`${req.method} ${path} ${info.kind} -> ${outcome.dropped ? 'dropped' : status} ${(outcome.charge || 0).toFixed(2)} RU ${Date.now() - started} ms`);
    };

    if (await injectFault(req, res, { path, info, activityId, record })) return;

    // Only Entra ID tokens are checked; any key is still accepted (README.md, "Entra ID tokens").
    const auth = entra && entra.verifyAuthorization(header(req, 'authorization'));
    const refusal = auth && (!auth.ok ? auth : isControlPlaneWrite(req, info) ? controlPlaneRefusal(req, path) : null);
    if (refusal) {
      await readBody(req).catch(() => {});
      send(res, refusal.status, errorBody(refusal.status === 401 ? 'Unauthorized' : 'Forbidden', refusal.message),
        { subStatus: refusal.subStatus, activityId });
      record(refusal.status);
      return;
    }

    let outcome;
    try {
      outcome = info.route === 'stock' ? await handlers.metadata(req, res) : await handlers.documents(req, info);
    } catch (e) {
      outcome = errorOutcome(e, log, `${req.method} ${path}`);
    }
    if (res.destroyed || res.headersSent) return;
    send(res, outcome.status, outcome.body, {
      charge: outcome.charge || 0,
      subStatus: outcome.subStatus,
      retryAfterMs: outcome.retryAfterMs,
      extraHeaders: outcome.headers,
      activityId,
    });
    record(outcome.status, outcome);
  };

  // Applies the first matching fault rule; true when it answered (or dropped) the request.
  async function injectFault(req, res, { path, info, activityId, record }) {
    const { delayMs, fault } = faults.match({ method: req.method, path, kind: info.kind, headers: req.headers });
    if (delayMs > 0) await sleep(delayMs);
    if (!fault) return false;
    if (fault.drop) {
      req.socket.destroy();
      record(0, { dropped: true, injected: true });
      return true;
    }
    const body = errorBody(`Injected${fault.status}`, fault.message || `Fault injected by tally-local-cosmos rule ${fault.ruleId}.`);
    send(res, fault.status, body, { subStatus: fault.subStatus, retryAfterMs: fault.retryAfterMs, activityId });
    record(fault.status, { injected: true });
    return true;
  }
}

async function answerIssuer(entra, route, req, res) {
  let status = 200;
  let body;
  if (route.kind === 'token') {
    const raw = await readBody(req);
    const answer = entra.tokenResponse(route.tenant, new URLSearchParams(raw.toString('utf8')), header(req, 'authorization'));
    status = answer.status;
    body = answer.body;
  } else {
    body = route.kind === 'openid' ? entra.openidConfiguration(route.tenant) : entra.jwks();
  }
  const payload = Buffer.from(JSON.stringify(body));
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': payload.length, 'cache-control': 'no-store' });
  res.end(payload);
}

// A request the client got wrong (body, document) is its 4xx; anything else is our 500, logged.
function errorOutcome(e, log, request) {
  if (e instanceof BodyError || e instanceof docs.RequestError) {
    return { status: e.status, body: errorBody(e.status === 413 ? 'RequestEntityTooLarge' : 'BadRequest', e.message), charge: 0 };
  }
  log(`internal error on ${request}: ${e.stack || e}`);
  return { status: 500, body: errorBody('InternalServerError', e.message), charge: 0 };
}

module.exports = { createRequestPipeline };
