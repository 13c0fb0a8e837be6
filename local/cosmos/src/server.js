'use strict';

// The Cosmos listener: HTTPS, keep-alive, in front of @vercel/cosmosdb-server.
//
// The package is used for what it does well: the in-memory account model
// (databases, containers, documents, resource ids, etags), its route table and
// handlers for databases, containers, partition key ranges and UDFs, and its
// SQL parser/executor. Its own request handler is what fails with the Java
// SDK, so we install our own at start-up and wrap the package's route handlers
// with it:
//
//   every request: classify -> fault rules (delay / status / drop) -> handler
//   -> RU charge, activity id, stats
//   document paths (/dbs/{db}/colls/{coll}/docs[/{id}]): our handlers
//   (documents.js, batch.js, query.js, query-plan.js), throughput budget first
//   everything else: the package's route handler, then our response headers.

const https = require('https');
const crypto = require('crypto');
const Account = require('@vercel/cosmosdb-server/lib/account').default;
const stockRoutes = require('@vercel/cosmosdb-server/lib/routes').default;

const RU = require('./request-units');
const docs = require('./documents');
const { executeBatch } = require('./batch');
const query = require('./query');
const { buildQueryPlan } = require('./query-plan');
const { ThroughputBudget, THROTTLE_SUB_STATUS } = require('./throughput');
const { startSweeper } = require('./ttl');
const { PartitionIndex } = require('./partition-index');
const { readJson, isTrue, header, sleep, BodyError } = require('./http-util');
const { LoopMonitor } = require('./loop-monitor');
const { Slicer } = require('./slices');

// The SDK's gateway connection pool keeps idle connections for 60 s; closing
// them earlier on our side makes it write into dead sockets now and then.
const KEEP_ALIVE_TIMEOUT_MS = 120 * 1000;

const DOC_ITEM = /^\/dbs\/([^/]+)\/colls\/([^/]+)\/docs\/([^/]+)$/;
const DOC_FEED = /^\/dbs\/([^/]+)\/colls\/([^/]+)\/docs$/;

function normalizePath(url) {
  let pathname = url.split('?')[0];
  // Some clients send a doubled leading slash; trailing slashes are ignored.
  while (pathname.startsWith('//')) pathname = pathname.slice(1);
  while (pathname.length > 1 && pathname.endsWith('/')) pathname = pathname.slice(0, -1);
  return pathname;
}

function decode(segment) {
  try {
    return decodeURIComponent(segment);
  } catch (e) {
    return segment;
  }
}

// -> { kind, route: 'item'|'feed'|'stock', dbId, collId, docId }
function classify(req, path) {
  const item = DOC_ITEM.exec(path);
  if (item) {
    return {
      kind: req.method === 'GET' ? 'read' : 'write',
      route: 'item',
      dbId: decode(item[1]),
      collId: decode(item[2]),
      docId: decode(item[3]),
    };
  }
  const feed = DOC_FEED.exec(path);
  if (feed) {
    const info = { route: 'feed', dbId: decode(feed[1]), collId: decode(feed[2]) };
    if (req.method === 'GET') return { ...info, kind: 'readfeed' };
    if (req.method === 'POST') {
      if (isTrue(req.headers['x-ms-cosmos-is-query-plan-request'])) return { ...info, kind: 'queryplan' };
      const contentType = String(req.headers['content-type'] || '');
      if (isTrue(req.headers['x-ms-documentdb-isquery']) || contentType.startsWith('application/query+json')) {
        return { ...info, kind: 'query' };
      }
      if (isTrue(req.headers['x-ms-cosmos-is-batch-request'])) return { ...info, kind: 'batch' };
      return { ...info, kind: 'write' };
    }
    return { ...info, kind: 'write' };
  }
  return { kind: 'metadata', route: 'stock' };
}

function createCosmosServer({ cert, key, faults, stats, throughput = new ThroughputBudget(), loop = new LoopMonitor(), log = () => {}, debug = false }) {
  let account = null;
  const cursors = new query.CursorStore();

  function send(res, status, body, { charge = 0, subStatus, retryAfterMs, extraHeaders, activityId } = {}) {
    const headers = {
      'x-ms-activity-id': activityId,
      'x-ms-request-charge': charge.toFixed(2),
      'x-ms-gatewayversion': 'tally-local-cosmos',
      ...extraHeaders,
    };
    if (subStatus) headers['x-ms-substatus'] = String(subStatus);
    if (retryAfterMs !== undefined && retryAfterMs !== null) headers['x-ms-retry-after-ms'] = String(retryAfterMs);
    if (body && body._etag && !headers.etag) headers.etag = body._etag;
    let payload = null;
    if (body !== undefined && body !== null && status !== 204 && status !== 304) {
      payload = Buffer.from(JSON.stringify(body));
      headers['content-type'] = 'application/json';
    }
    headers['content-length'] = payload ? payload.length : 0;
    res.writeHead(status, headers);
    res.end(payload);
  }

  function errorBody(code, message) {
    return { code, message };
  }

  function resolveContainer(dbId, collId) {
    const database = account.database(dbId);
    const dbData = database.read();
    if (!dbData) return null;
    const collection = database.collection(collId);
    if (!collection.read()) return null;
    return { budgetKey: ThroughputBudget.key(dbData.id, collection.read().id), container: new docs.Container(collection) };
  }

  function wantsMinimal(req) {
    return String(req.headers.prefer || '').toLowerCase().includes('return=minimal');
  }

  // -> { status, body, charge, subStatus?, retryAfterMs?, headers?, throttled?, budgetCharged? }
  async function handleDocumentRequest(req, info) {
    const resolved = resolveContainer(info.dbId, info.collId);
    if (!resolved) {
      return {
        status: 404,
        subStatus: docs.SUB.OWNER_RESOURCE_NOT_EXISTS,
        body: errorBody('NotFound', `Resource Not Found: container ${info.dbId}/${info.collId} does not exist.`),
        charge: RU.rejected(),
      };
    }
    const { container, budgetKey } = resolved;
    const atomicBatch = info.kind === 'batch' && isTrue(req.headers['x-ms-cosmos-batch-atomic']);
    const perOperationBudget = info.kind === 'batch' && !atomicBatch;
    if (info.kind !== 'queryplan' && !perOperationBudget) {
      const admission = throughput.tryAdmit(budgetKey);
      if (!admission.admitted) {
        return {
          status: 429,
          subStatus: THROTTLE_SUB_STATUS,
          retryAfterMs: admission.retryAfterMs,
          body: errorBody('TooManyRequests', 'Request rate is large. More Request Units may be needed, so no changes were made. Please retry this request later.'),
          charge: 0,
          throttled: true,
        };
      }
    }
    const pk = docs.partitionFromHeader(req.headers['x-ms-documentdb-partitionkey']);
    const ifMatch = header(req, 'if-match');
    const ifNoneMatch = header(req, 'if-none-match');
    const outcome = await runDocumentOperation(req, info, container, pk, { ifMatch, ifNoneMatch, budgetKey });
    if (!outcome.budgetCharged) throughput.charge(budgetKey, outcome.charge || 0);
    if (wantsMinimal(req) && info.kind === 'write' && outcome.status < 300 && outcome.body) {
      outcome.headers = { ...(outcome.headers || {}), etag: outcome.body._etag };
      outcome.body = null;
    }
    return outcome;
  }

  async function runDocumentOperation(req, info, container, pk, { ifMatch, ifNoneMatch, budgetKey }) {
    if (info.route === 'item') {
      switch (req.method) {
        case 'GET': {
          const out = docs.read(container, pk, info.docId, { ifNoneMatch });
          if (out.status === 304) out.headers = { etag: out.etag };
          return out;
        }
        case 'PUT':
          return docs.replace(container, pk, info.docId, await readJson(req), { ifMatch });
        case 'DELETE':
          return docs.remove(container, pk, info.docId, { ifMatch });
        case 'PATCH':
          return docs.patch(container, pk, info.docId, await readJson(req), { ifMatch });
        default:
          return docs.error(405, 'MethodNotAllowed', `${req.method} is not supported on a document.`);
      }
    }
    switch (info.kind) {
      case 'queryplan':
        return queryPlan(req, container);
      case 'query':
        return runQuery(req, container, pk);
      case 'readfeed':
        return readFeed(req, container, pk);
      case 'batch':
        return runBatch(req, container, pk, budgetKey);
      default: {
        const body = await readJson(req);
        if (isTrue(req.headers['x-ms-documentdb-is-upsert'])) return docs.upsert(container, pk, body, { ifMatch });
        return docs.create(container, pk, body);
      }
    }
  }

  async function queryPlan(req, container) {
    const spec = await readJson(req);
    if (!spec || typeof spec.query !== 'string') return docs.badRequest('The query plan request needs {"query": "..."}.');
    const invalid = query.validate(container.documents, spec.query, spec.parameters);
    if (invalid) return docs.badRequest(`Syntax error in query: ${invalid}`);
    return { status: 200, body: buildQueryPlan({ selectValue: query.hasSelectValue(spec.query) }), charge: RU.queryPlan() };
  }

  function feedResponse(container, rows, continuation, extra = {}) {
    const headers = { 'x-ms-item-count': String(rows.length), 'x-ms-documentdb-partitionkeyrangeid': '0' };
    if (continuation) headers['x-ms-continuation'] = continuation;
    return { status: 200, body: { _rid: container.data._rid, Documents: rows, _count: rows.length }, headers, ...extra };
  }

  function queryMetrics(scanned, returned, bytes, elapsedMs) {
    const t = elapsedMs.toFixed(2);
    return [
      `totalExecutionTimeInMs=${t}`, 'queryCompileTimeInMs=0.00', 'queryLogicalPlanBuildTimeInMs=0.00',
      'queryPhysicalPlanBuildTimeInMs=0.00', 'queryOptimizationTimeInMs=0.00', `VMExecutionTimeInMs=${t}`,
      'indexLookupTimeInMs=0.00', 'documentLoadTimeInMs=0.00', 'systemFunctionExecuteTimeInMs=0.00',
      'userFunctionExecuteTimeInMs=0.00', `retrievedDocumentCount=${scanned}`, 'retrievedDocumentSize=0',
      `outputDocumentCount=${returned}`, `outputDocumentSize=${bytes}`, 'writeOutputTimeInMs=0.00',
      'indexUtilizationRatio=1.00',
    ].join(';');
  }

  async function runQuery(req, container, pk) {
    const spec = await readJson(req);
    if (!spec || typeof spec.query !== 'string') return docs.badRequest('The query request needs {"query": "..."}.');
    const started = process.hrtime.bigint();
    // Without a partition key header the query spans the container (the SDK's
    // cross-partition path, sent with a partition key range id).
    const partition = pk.given ? pk.key : null;
    let result;
    try {
      result = await query.pageAsync({
        cursors,
        continuation: header(req, 'x-ms-continuation'),
        maxItemCount: header(req, 'x-ms-max-item-count'),
        run: async () => {
          const slicer = new Slicer();
          const input = await container.liveDocumentsSliced(partition, slicer);
          const rows = await query.executeSliced({
            documents: container.documents,
            docs: input,
            sql: spec.query,
            parameters: spec.parameters,
            compositeIndexes: (container.data.indexingPolicy || {}).compositeIndexes,
          }, slicer);
          return { rows, scanned: input.length };
        },
      });
    } catch (e) {
      if (e instanceof query.QueryError) return docs.badRequest(e.message);
      throw e;
    }
    const charge = RU.query({ scanned: result.scanned, returned: result.rows.length, returnedBytes: result.bytes });
    const out = feedResponse(container, result.rows, result.continuation, { charge });
    if (isTrue(req.headers['x-ms-documentdb-populatequerymetrics'])) {
      const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
      out.headers['x-ms-documentdb-query-metrics'] = queryMetrics(result.scanned, result.rows.length, result.bytes, elapsedMs);
    }
    return out;
  }

  async function readFeed(req, container, pk) {
    if (req.headers['a-im']) {
      return docs.badRequest('The change feed is not supported by tally-local-cosmos (see local/cosmos/README.md).');
    }
    const partition = pk.given ? pk.key : null;
    let result;
    try {
      result = await query.pageAsync({
        cursors,
        continuation: header(req, 'x-ms-continuation'),
        maxItemCount: header(req, 'x-ms-max-item-count'),
        run: async () => {
          const rows = await container.liveDocumentsSliced(partition);
          return { rows, scanned: rows.length };
        },
      });
    } catch (e) {
      if (e instanceof query.QueryError) return docs.badRequest(e.message);
      throw e;
    }
    const charge = RU.query({ scanned: result.scanned, returned: result.rows.length, returnedBytes: result.bytes });
    return feedResponse(container, result.rows, result.continuation, { charge });
  }

  async function runBatch(req, container, pk, budgetKey) {
    const ops = await readJson(req);
    const atomic = isTrue(req.headers['x-ms-cosmos-batch-atomic']);
    const continueOnError = isTrue(req.headers['x-ms-cosmos-batch-continue-on-error']);
    const budget = atomic
      ? null
      : { tryAdmit: () => throughput.tryAdmit(budgetKey), charge: (ru) => throughput.charge(budgetKey, ru) };
    const out = executeBatch(container, ops, { atomic, continueOnError, headerPartitionKey: pk, budget });
    stats.recordBatchOperations({ total: Array.isArray(ops) ? ops.length : 0, throttled: out.throttledOps || 0 });
    return out;
  }

  // The package's handlers answer metadata requests; we add our headers.
  async function handleStockRequest(req, res) {
    const route = stockRoutes(req);
    if (!route) {
      return { status: 400, body: errorBody('BadRequest', `no route for ${req.method} ${req.url}`), charge: 0 };
    }
    const [params, handler] = route;
    res.statusCode = 200;
    let body = await handler(account, req, res, params);
    let status = res.statusCode;
    const headers = {};
    for (const name of ['x-ms-continuation', 'x-ms-item-count']) {
      const v = res.getHeader(name);
      if (v !== undefined) headers[name] = String(v);
    }
    if (status >= 400 && body && body.message === undefined) body = { code: String(status), message: '', ...body };
    // Partition key ranges are read as an incremental feed; the ranges never
    // change here, so every conditional re-read is "not modified".
    if (req.headers['a-im'] && status === 200) {
      if (req.headers['if-none-match']) status = 304;
      headers.etag = '"1"';
    }
    const charge = req.method === 'GET' && normalizePath(req.url) === '/' ? 0 : RU.metadata();
    return { status, body, charge, headers };
  }

  async function handle(req, res) {
    const started = Date.now();
    const path = normalizePath(req.url);
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
      });
      loop.recordRequest(info.kind);
      if (debug) log(`${req.method} ${path} ${info.kind} -> ${outcome.dropped ? 'dropped' : status} ${(outcome.charge || 0).toFixed(2)} RU ${Date.now() - started} ms`);
    };

    const { delayMs, fault } = faults.match({ method: req.method, path, kind: info.kind, headers: req.headers });
    if (delayMs > 0) await sleep(delayMs);
    if (fault) {
      if (fault.drop) {
        req.socket.destroy();
        record(0, { dropped: true, injected: true });
        return;
      }
      const body = errorBody(`Injected${fault.status}`, fault.message || `Fault injected by tally-local-cosmos rule ${fault.ruleId}.`);
      send(res, fault.status, body, { subStatus: fault.subStatus, retryAfterMs: fault.retryAfterMs, activityId });
      record(fault.status, { injected: true });
      return;
    }

    let outcome;
    try {
      outcome = info.route === 'stock' ? await handleStockRequest(req, res) : await handleDocumentRequest(req, info);
    } catch (e) {
      if (e instanceof BodyError || e instanceof docs.RequestError) {
        outcome = { status: e.status, body: errorBody(e.status === 413 ? 'RequestEntityTooLarge' : 'BadRequest', e.message), charge: 0 };
      } else {
        log(`internal error on ${req.method} ${path}: ${e.stack || e}`);
        outcome = { status: 500, body: errorBody('InternalServerError', e.message), charge: 0 };
      }
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
  }

  const server = https.createServer({ cert, key, keepAlive: true }, (req, res) => {
    handle(req, res).catch((e) => {
      log(`unhandled error: ${e.stack || e}`);
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ code: 'InternalServerError', message: String(e.message) }));
      }
    });
  });
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 5000;

  let stopSweeper = () => {};
  server.on('listening', () => {
    const { address, port } = server.address();
    const host = address === '0.0.0.0' || address === '::' ? 'localhost' : address;
    account = new Account(host.includes(':') ? `[${host}]` : host, port);
    stopSweeper = startSweeper({
      forEachCollection: (fn) => forEachIndexedCollection(account, fn),
      purge: (collection, index, data) => new docs.Container(collection).purge(data),
      log,
    });
  });
  server.on('close', () => stopSweeper());
  return server;
}

function forEachIndexedCollection(account, fn) {
  for (const db of account.databases._data.values()) {
    for (const collection of db.collections._data.values()) {
      const index = collection.documents && collection.documents._data;
      if (index instanceof PartitionIndex) fn(collection, index);
    }
  }
}

module.exports = { createCosmosServer, classify, normalizePath };
