'use strict';

// Requests on a container's documents (/dbs/{db}/colls/{coll}/docs[/{id}]):
// find the container, admit the request against its throughput budget, run
// the operation, book its charge.
//
// Every handler returns an outcome the request pipeline sends:
// { status, body, charge, subStatus?, retryAfterMs?, headers?, throttled?, budgetCharged? }

const RU = require('./request-units');
const docs = require('./documents');
const { executeBatch } = require('./batch');
const { queryPlan, runQuery, readFeed } = require('./feed-requests');
const { ThroughputBudget, THROTTLE_SUB_STATUS } = require('./throughput');
const { readJson, isTrue, header } = require('./http-util');
const { errorBody } = require('./responses');

// account() is the package's account, created once the listener knows its address.
function createDocumentRequests({ account, throughput, stats, cursors }) {
  async function handle(req, info) {
    const resolved = resolveContainer(account(), info.dbId, info.collId);
    if (!resolved) return containerNotFound(info);
    const { container, budgetKey } = resolved;
    const refused = admit(req, info, budgetKey);
    if (refused) return refused;
    const pk = docs.partitionFromHeader(req.headers['x-ms-documentdb-partitionkey']);
    const conditions = { ifMatch: header(req, 'if-match'), ifNoneMatch: header(req, 'if-none-match') };
    const outcome = info.route === 'item'
      ? await itemOperation(req, info, container, pk, conditions)
      : await feedOperation(req, info, container, pk, conditions.ifMatch, budgetKey);
    if (!outcome.budgetCharged) throughput.charge(budgetKey, outcome.charge || 0);
    if (wantsMinimal(req) && info.kind === 'write' && outcome.status < 300 && outcome.body) {
      outcome.headers = { ...(outcome.headers || {}), etag: outcome.body._etag };
      outcome.body = null;
    }
    return outcome;
  }

  // -> a 429 outcome when the container's budget for this second is spent, else null. The query plan
  // is the gateway's and not metered; a non-atomic batch is admitted operation by operation instead.
  function admit(req, info, budgetKey) {
    const atomicBatch = info.kind === 'batch' && isTrue(req.headers['x-ms-cosmos-batch-atomic']);
    const perOperationBudget = info.kind === 'batch' && !atomicBatch;
    if (info.kind === 'queryplan' || perOperationBudget) return null;
    const admission = throughput.tryAdmit(budgetKey);
    if (admission.admitted) return null;
    return {
      status: 429,
      subStatus: THROTTLE_SUB_STATUS,
      retryAfterMs: admission.retryAfterMs,
      body: errorBody('TooManyRequests', 'Request rate is large. More Request Units may be needed, so no changes were made. Please retry this request later.'),
      charge: 0,
      throttled: true,
    };
  }

  async function feedOperation(req, info, container, pk, ifMatch, budgetKey) {
    switch (info.kind) {
      case 'queryplan':
        return queryPlan(req, container);
      case 'query':
        return runQuery(req, container, pk, cursors);
      case 'readfeed':
        return readFeed(req, container, pk, cursors);
      case 'batch':
        return runBatch(req, container, pk, budgetKey);
      default: {
        const body = await readJson(req);
        if (isTrue(req.headers['x-ms-documentdb-is-upsert'])) return docs.upsert(container, pk, body, { ifMatch });
        return docs.create(container, pk, body);
      }
    }
  }

  async function runBatch(req, container, pk, budgetKey) {
    const ops = await readJson(req);
    const atomic = isTrue(req.headers['x-ms-cosmos-batch-atomic']);
    const continueOnError = isTrue(req.headers['x-ms-cosmos-batch-continue-on-error']);
    const budget = atomic
      ? null
      : { tryAdmit: () => throughput.tryAdmit(budgetKey), charge: (ru) => throughput.charge(budgetKey, ru) };
    const out = executeBatch(container, ops, { atomic, continueOnError, headerPartitionKey: pk, budget, minimal: wantsMinimal(req) });
    const withBody = Array.isArray(out.body) ? out.body.filter((r) => r.resourceBody !== undefined).length : 0;
    stats.recordBatchOperations({ total: Array.isArray(ops) ? ops.length : 0, throttled: out.throttledOps || 0, withBody });
    return out;
  }

  return handle;
}

// -> { container, budgetKey } or null when the database or the container does not exist.
function resolveContainer(account, dbId, collId) {
  const database = account.database(dbId);
  const dbData = database.read();
  if (!dbData) return null;
  const collection = database.collection(collId);
  if (!collection.read()) return null;
  return { budgetKey: ThroughputBudget.key(dbData.id, collection.read().id), container: new docs.Container(collection) };
}

function containerNotFound(info) {
  return {
    status: 404,
    subStatus: docs.SUB.OWNER_RESOURCE_NOT_EXISTS,
    body: errorBody('NotFound', `Resource Not Found: container ${info.dbId}/${info.collId} does not exist.`),
    charge: RU.rejected(),
  };
}

async function itemOperation(req, info, container, pk, { ifMatch, ifNoneMatch }) {
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

function wantsMinimal(req) {
  return String(req.headers.prefer || '').toLowerCase().includes('return=minimal');
}

module.exports = { createDocumentRequests };
