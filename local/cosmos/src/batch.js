'use strict';

// Batch requests: POST .../docs with x-ms-cosmos-is-batch-request: True and a
// JSON array of operations ({operationType, id, partitionKey, resourceBody,
// ifMatch, ifNoneMatch, minimalReturnPreference}). The Java SDK sends two kinds:
//
// - transactional batch (executeCosmosBatch): x-ms-cosmos-batch-atomic: True,
//   the partition key in the x-ms-documentdb-partitionkey header. All or
//   nothing: if one operation fails, the ones before it are rolled back and the
//   answer is 207 Multi-Status with the failing operation's status and 424
//   Failed Dependency on every other one.
// - bulk (executeBulkOperations): atomic False, continue-on-error True, routed
//   by partition key range, each operation carrying its own partitionKey
//   (a JSON array string). Operations succeed or fail independently; when the
//   throughput budget runs out midway, the remaining operations answer 429 /
//   3200 with retryAfterMilliseconds and the SDK's bulk executor retries them.
//
// The package's batch handler reads the partition key from the wrong place,
// does not roll back, answers 200 on failure and has no Patch.

const docs = require('./documents');
const { partitionKeyString } = require('./partition-index');
const { THROTTLE_SUB_STATUS } = require('./throughput');

const MAX_OPERATIONS = 100;

function parseOpPartitionKey(op, fallback) {
  if (op.partitionKey === undefined || op.partitionKey === null) return fallback;
  return docs.partitionFromHeader(
    typeof op.partitionKey === 'string' ? op.partitionKey : JSON.stringify(op.partitionKey),
  );
}

function runOperation(container, op, pk) {
  const type = op.operationType;
  const body = op.resourceBody;
  const id = op.id !== undefined ? op.id : body && body.id;
  const options = { ifMatch: op.ifMatch, ifNoneMatch: op.ifNoneMatch };
  switch (type) {
    case 'Create':
      return docs.create(container, pk, body);
    case 'Upsert':
      return docs.upsert(container, pk, body, options);
    case 'Replace':
      return docs.replace(container, pk, id, body, options);
    case 'Read':
      return docs.read(container, pk, id, options);
    case 'Delete':
      return docs.remove(container, pk, id, options);
    case 'Patch':
      return docs.patch(container, pk, id, body, options);
    default:
      return docs.badRequest(`Operation type ${JSON.stringify(type)} is not supported in a batch.`);
  }
}

// A write's result carries the document unless the operation says minimalReturnPreference, or the request came
// with `Prefer: return=minimal` and the operation does not say otherwise. The Java SDK relies on the second: a
// client built with contentResponseOnWriteEnabled(false) sends that header on a bulk request, and turns it off
// only when an operation needs its content (azure-sdk-for-java#24771: bulk reads came back empty under it). A
// read always carries its document here.
function toResult(outcome, op, minimalByDefault) {
  const result = { statusCode: outcome.status, requestCharge: outcome.charge || 0 };
  if (outcome.subStatus) result.subStatusCode = outcome.subStatus;
  const body = outcome.body;
  if (outcome.status < 400 && body && body._etag) {
    result.eTag = body._etag;
    const asked = op.minimalReturnPreference === undefined ? minimalByDefault : op.minimalReturnPreference === true;
    const minimal = asked && op.operationType !== 'Read';
    if (!minimal) result.resourceBody = body;
  }
  return result;
}

// -> { status, body: [results] or {code,message}, charge, throttledOps }
// `budget` = { tryAdmit(): {admitted, retryAfterMs}, charge(ru) } or null.
function executeBatch(container, ops, { atomic, continueOnError, headerPartitionKey, budget, minimal = false }) {
  if (!Array.isArray(ops) || ops.length === 0) {
    return { status: 400, body: { code: 'BadRequest', message: 'A batch needs a non-empty JSON array of operations.' }, charge: 1 };
  }
  if (ops.length > MAX_OPERATIONS) {
    return {
      status: 400,
      body: { code: 'BadRequest', message: `A batch can have at most ${MAX_OPERATIONS} operations, got ${ops.length}.` },
      charge: 1,
    };
  }
  const partitions = ops.map((op) => {
    if (!op || typeof op !== 'object') return null;
    if (op.partitionKey !== undefined && op.partitionKey !== null) {
      try {
        return parseOpPartitionKey(op, null);
      } catch (e) {
        return null; // answered 400 for this operation
      }
    }
    if (headerPartitionKey.given) return headerPartitionKey;
    const body = op.resourceBody;
    if (body && typeof body === 'object' && !Array.isArray(body) && op.operationType !== 'Patch') {
      return { given: false, key: container.index.partitionKeyOf(body) };
    }
    return headerPartitionKey;
  });
  if (atomic) {
    if (!headerPartitionKey.given) {
      return { status: 400, body: { code: 'BadRequest', message: 'A transactional batch needs the x-ms-documentdb-partitionkey header.' }, charge: 1 };
    }
    if (partitions.some((p) => p && p.key !== headerPartitionKey.key)) {
      return { status: 400, body: { code: 'BadRequest', message: 'All operations of a transactional batch must target its partition key.' }, charge: 1 };
    }
    return executeAtomic(container, ops, headerPartitionKey, minimal);
  }
  return executeIndependent(container, ops, partitions, { continueOnError, budget, minimal });
}

function executeAtomic(container, ops, pk, minimal) {
  const undo = [];
  const outcomes = [];
  let failedAt = -1;
  for (let i = 0; i < ops.length; i += 1) {
    const outcome = ops[i] && typeof ops[i] === 'object' ? runOperation(container, ops[i], pk) : docs.badRequest('invalid operation');
    outcomes.push(outcome);
    if (outcome.status >= 400) {
      failedAt = i;
      break;
    }
    if (outcome.undo) undo.push(outcome.undo);
  }
  if (failedAt < 0) {
    const results = outcomes.map((o, i) => toResult(o, ops[i], minimal));
    return { status: 200, body: results, charge: sumCharges(results), throttledOps: 0 };
  }
  for (let i = undo.length - 1; i >= 0; i -= 1) undo[i]();
  const results = ops.map((op, i) => {
    if (i === failedAt) return toResult(outcomes[i], op, minimal);
    return { statusCode: 424, requestCharge: 0 };
  });
  // The work done before the failure is still billed, as on the service.
  const charge = outcomes.reduce((sum, o) => sum + (o.charge || 0), 0);
  return { status: 207, body: results, charge: Math.round(charge * 100) / 100, throttledOps: 0 };
}

function executeIndependent(container, ops, partitions, { continueOnError, budget, minimal }) {
  const results = [];
  let failed = false;
  let throttledOps = 0;
  for (let i = 0; i < ops.length; i += 1) {
    const op = ops[i];
    if (failed && !continueOnError) {
      results.push({ statusCode: 424, requestCharge: 0 });
      continue;
    }
    if (budget) {
      const admission = budget.tryAdmit();
      if (!admission.admitted) {
        throttledOps += 1;
        failed = true;
        results.push({
          statusCode: 429,
          subStatusCode: THROTTLE_SUB_STATUS,
          requestCharge: 0,
          retryAfterMilliseconds: admission.retryAfterMs,
        });
        continue;
      }
    }
    let outcome;
    if (!op || typeof op !== 'object' || !partitions[i]) outcome = docs.badRequest('invalid operation');
    else {
      try {
        outcome = runOperation(container, op, partitions[i]);
      } catch (e) {
        if (!(e instanceof docs.RequestError)) throw e;
        outcome = docs.badRequest(e.message);
      }
    }
    if (budget) budget.charge(outcome.charge || 0);
    if (outcome.status >= 400) failed = true;
    results.push(toResult(outcome, op || {}, minimal));
  }
  const allOk = results.every((r) => r.statusCode < 400);
  return { status: allOk ? 200 : 207, body: results, charge: sumCharges(results), throttledOps, budgetCharged: Boolean(budget) };
}

function sumCharges(results) {
  return Math.round(results.reduce((s, r) => s + (r.requestCharge || 0), 0) * 100) / 100;
}

module.exports = { executeBatch, MAX_OPERATIONS, partitionKeyString };
