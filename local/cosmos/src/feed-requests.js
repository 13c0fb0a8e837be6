'use strict';

// The docs feed's read side: the SDK's query-plan request, queries, and read
// feeds (a query without SQL). Queries and read feeds page through the same
// cursors, so a continuation resumes where the last page ended.

const RU = require('./request-units');
const docs = require('./documents');
const query = require('./query');
const { buildQueryPlan } = require('./query-plan');
const { readJson, isTrue, header } = require('./http-util');
const { Slicer } = require('./slices');

async function queryPlan(req, container) {
  const spec = await readJson(req);
  if (!spec || typeof spec.query !== 'string') return docs.badRequest('The query plan request needs {"query": "..."}.');
  const invalid = query.validate(container.documents, spec.query, spec.parameters);
  if (invalid) return docs.badRequest(`Syntax error in query: ${invalid}`);
  return { status: 200, body: buildQueryPlan({ selectValue: query.hasSelectValue(spec.query) }), charge: RU.queryPlan() };
}

async function runQuery(req, container, pk, cursors) {
  const spec = await readJson(req);
  if (!spec || typeof spec.query !== 'string') return docs.badRequest('The query request needs {"query": "..."}.');
  const started = process.hrtime.bigint();
  // Without a partition key header the query spans the container (the SDK's
  // cross-partition path, sent with a partition key range id).
  const partition = pk.given ? pk.key : null;
  const { result, refused } = await nextPage(req, cursors, async () => {
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
  });
  if (refused) return refused;
  const out = feedResponse(container, result);
  if (isTrue(req.headers['x-ms-documentdb-populatequerymetrics'])) {
    const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
    out.headers['x-ms-documentdb-query-metrics'] = queryMetrics(result.scanned, result.rows.length, result.bytes, elapsedMs);
  }
  return out;
}

async function readFeed(req, container, pk, cursors) {
  if (req.headers['a-im']) {
    return docs.badRequest('The change feed is not supported by tally-local-cosmos (see local/cosmos/README.md).');
  }
  const partition = pk.given ? pk.key : null;
  const { result, refused } = await nextPage(req, cursors, async () => {
    const rows = await container.liveDocumentsSliced(partition);
    return { rows, scanned: rows.length };
  });
  return refused || feedResponse(container, result);
}

// -> { result } (one page, from a cursor or from running `run`), or { refused }: a 400 for SQL the engine rejects.
async function nextPage(req, cursors, run) {
  try {
    return {
      result: await query.pageAsync({
        cursors,
        continuation: header(req, 'x-ms-continuation'),
        maxItemCount: header(req, 'x-ms-max-item-count'),
        run,
      }),
    };
  } catch (e) {
    if (e instanceof query.QueryError) return { refused: docs.badRequest(e.message) };
    throw e;
  }
}

function feedResponse(container, result) {
  const { rows, continuation } = result;
  const charge = RU.query({ scanned: result.scanned, returned: rows.length, returnedBytes: result.bytes });
  const headers = { 'x-ms-item-count': String(rows.length), 'x-ms-documentdb-partitionkeyrangeid': '0' };
  if (continuation) headers['x-ms-continuation'] = continuation;
  return { status: 200, body: { _rid: container.data._rid, Documents: rows, _count: rows.length }, headers, charge };
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

module.exports = { queryPlan, runQuery, readFeed };
