'use strict';

// The HTTP surface without the Java SDK: a real HTTPS listener on a free port,
// requests shaped like the SDK's (headers per the SDK's own constants).

const test = require('node:test');
const assert = require('node:assert/strict');
const { startEndpoint, pk } = require('./support/endpoint');

let endpoint;
const call = (...args) => endpoint.call(...args);
const controlCall = (...args) => endpoint.controlCall(...args);

test.before(async () => {
  endpoint = await startEndpoint();
  await call('POST', '/dbs', { id: 'db' });
  await call('POST', '/dbs/db/colls', { id: 'c', partitionKey: { paths: ['/pk'], kind: 'Hash' }, defaultTtl: -1 });
});

test.after(() => endpoint.close());

test('keep-alive, request charge and activity id on every answer', async () => {
  const r = await call('GET', '/');
  assert.equal(r.status, 200);
  assert.equal(r.headers.connection, 'keep-alive');
  assert.ok(r.headers['x-ms-request-charge'] !== undefined);
  assert.ok(r.headers['x-ms-activity-id']);
});

test('a missing document is 404, not 500', async () => {
  const r = await call('GET', '/dbs/db/colls/c/docs/nope', undefined, pk('p'));
  assert.equal(r.status, 404);
  assert.equal(r.headers['x-ms-request-charge'], '1.00');
});

test('the query-plan request gets a plan, not documents', async () => {
  await call('POST', '/dbs/db/colls/c/docs', { id: 'q1', pk: 'p' }, pk('p'));
  const r = await call('POST', '/dbs/db/colls/c/docs', { query: 'SELECT * FROM c', parameters: [] },
    { 'x-ms-cosmos-is-query-plan-request': 'True', 'x-ms-documentdb-isquery': 'True' });
  assert.equal(r.status, 200);
  assert.equal(r.body.partitionedQueryExecutionInfoVersion, 2);
  assert.deepEqual(r.body.queryRanges, [{ min: '', max: 'FF', isMinInclusive: true, isMaxInclusive: false }]);
  assert.equal(r.body.queryInfo.distinctType, 'None');
  assert.equal(r.body.Documents, undefined);
});

test('a failing transactional batch rolls back and answers 207 with 424s', async () => {
  await call('POST', '/dbs/db/colls/c/docs', { id: 'b-existing', pk: 'b', v: 1 }, pk('b'));
  const ops = [
    { operationType: 'Create', resourceBody: { id: 'b-new', pk: 'b' } },
    { operationType: 'Patch', id: 'b-existing', resourceBody: { operations: [{ op: 'incr', path: '/v', value: 1 }] } },
    { operationType: 'Create', resourceBody: { id: 'b-existing', pk: 'b' } },
  ];
  const r = await call('POST', '/dbs/db/colls/c/docs', ops,
    { ...pk('b'), 'x-ms-cosmos-is-batch-request': 'True', 'x-ms-cosmos-batch-atomic': 'True' });
  assert.equal(r.status, 207);
  assert.deepEqual(r.body.map((x) => x.statusCode), [424, 424, 409]);
  assert.equal((await call('GET', '/dbs/db/colls/c/docs/b-new', undefined, pk('b'))).status, 404);
  assert.equal((await call('GET', '/dbs/db/colls/c/docs/b-existing', undefined, pk('b'))).body.v, 1);
});

test('a bulk write result carries its document unless the request or the operation asks for none', async () => {
  const bulk = { 'x-ms-cosmos-is-batch-request': 'True', 'x-ms-cosmos-batch-atomic': 'False', 'x-ms-cosmos-batch-continue-on-error': 'True' };
  const before = (await controlCall('GET', '/stats')).body.batchOperationsWithBody;
  const full = await call('POST', '/dbs/db/colls/c/docs',
    [{ operationType: 'Create', partitionKey: '["m"]', resourceBody: { id: 'm1', pk: 'm' } }], bulk);
  assert.equal(full.body[0].statusCode, 201);
  assert.equal(full.body[0].resourceBody.id, 'm1');
  // The Java SDK's client-wide contentResponseOnWriteEnabled(false) arrives as this header.
  const minimal = await call('POST', '/dbs/db/colls/c/docs', [
    { operationType: 'Create', partitionKey: '["m"]', resourceBody: { id: 'm2', pk: 'm' } },
    { operationType: 'Patch', partitionKey: '["m"]', id: 'm1', resourceBody: { operations: [{ op: 'set', path: '/v', value: 2 }] } },
    { operationType: 'Read', partitionKey: '["m"]', id: 'm1' },
    { operationType: 'Create', partitionKey: '["m"]', resourceBody: { id: 'm3', pk: 'm' }, minimalReturnPreference: false },
  ], { ...bulk, prefer: 'return=minimal' });
  assert.deepEqual(minimal.body.map((x) => x.statusCode), [201, 200, 200, 201]);
  assert.deepEqual(minimal.body.map((x) => x.resourceBody === undefined), [true, true, false, false]);
  assert.ok(minimal.body.every((x) => x.eTag));
  const perOperation = await call('POST', '/dbs/db/colls/c/docs',
    [{ operationType: 'Create', partitionKey: '["m"]', resourceBody: { id: 'm4', pk: 'm' }, minimalReturnPreference: true }], bulk);
  assert.equal(perOperation.body[0].resourceBody, undefined);
  assert.equal((await controlCall('GET', '/stats')).body.batchOperationsWithBody - before, 3);
});

test('the stats count the bytes of every request body received', async () => {
  const before = (await controlCall('GET', '/stats')).body.requestBytes;
  const doc = { id: 'bytes-1', pk: 'y', text: 'ü'.repeat(100) };
  assert.equal((await call('POST', '/dbs/db/colls/c/docs', doc, pk('y'))).status, 201);
  assert.equal((await controlCall('GET', '/stats')).body.requestBytes - before, Buffer.byteLength(JSON.stringify(doc)));
});

test('a conditional patch holds or fails as its condition says, whatever literals it carries', async () => {
  await call('POST', '/dbs/db/colls/c/docs', { id: 'cnd', pk: 'k', ver: 5, name: 'v 12', arr: [3, 4], x1: 2 }, pk('k'));
  const cases = [
    ['from c where c.ver < 6', 200], ['from c where c.ver < 5', 412], ['from c where c.ver < -1', 412],
    ["from c where c.name = 'v 12'", 200], ["from c where c.name = 'v 13'", 412], ['from c where c.arr[1] = 4', 200],
    ['from c where c.arr[0] = 4', 412], ['from c where c.x1 = 2', 200], ['from c where c.ver > 4.5e0', 200],
    ['where c.ver = 5', 200], ['from c where c.ver = 5 and c.x1 > 3', 412], ['from c where c.ver in (4, 5)', 200],
    ['from c where c.ver in (4, 6)', 412], ['from c where ABS(c.ver - 7) = 2', 200],
  ];
  for (const [condition, status] of cases) {
    const r = await call('PATCH', '/dbs/db/colls/c/docs/cnd', { operations: [{ op: 'set', path: '/touched', value: 1 }], condition }, pk('k'));
    assert.equal(r.status, status, condition);
  }
});

test('an injected fault answers with status, sub-status and retry-after, then stops', async () => {
  const added = await controlCall('POST', '/faults', { status: 410, subStatus: 1002, retryAfterMs: 7, kind: 'read', count: 1 });
  assert.equal(added.status, 201);
  const r = await call('GET', '/dbs/db/colls/c/docs/q1', undefined, pk('p'));
  assert.equal(r.status, 410);
  assert.equal(r.headers['x-ms-substatus'], '1002');
  assert.equal(r.headers['x-ms-retry-after-ms'], '7');
  assert.equal((await call('GET', '/dbs/db/colls/c/docs/q1', undefined, pk('p'))).status, 200);
  const stats = (await controlCall('GET', '/stats')).body;
  assert.ok(stats.byKindStatus['read:410'] >= 1);
  assert.ok(stats.injected >= 1);
  await controlCall('DELETE', '/faults');
});

test('an invalid fault rule is refused with its reason', async () => {
  const r = await controlCall('POST', '/faults', { status: 200 });
  assert.equal(r.status, 400);
  assert.match(r.body.error, /status/);
});

test('a spent throughput budget answers 429/3200 with retry-after', async () => {
  await controlCall('PUT', '/throughput', { ruPerSecond: 10, database: 'db', container: 'c' });
  let throttled = null;
  for (let i = 0; i < 10 && !throttled; i += 1) {
    const r = await call('POST', '/dbs/db/colls/c/docs', { id: `t${i}`, pk: 't' }, pk('t'));
    if (r.status === 429) throttled = r;
  }
  await controlCall('PUT', '/throughput', { ruPerSecond: null, database: 'db', container: 'c' });
  assert.ok(throttled, 'expected a 429 within 10 writes at 10 RU/s');
  assert.equal(throttled.headers['x-ms-substatus'], '3200');
  assert.ok(Number(throttled.headers['x-ms-retry-after-ms']) > 0);
  assert.equal(throttled.headers['x-ms-request-charge'], '0.00');
});

test('the control API is not served on the Cosmos port', async () => {
  const r = await call('GET', '/faults');
  assert.ok(r.status === 400 || r.status === 404);
  assert.equal(r.body.rules, undefined);
});

test('the throughput a container create asks for is recorded (manual, autoscale, none), not enforced', async () => {
  const spec = (id) => ({ id, partitionKey: { paths: ['/pk'], kind: 'Hash' } });
  await call('POST', '/dbs/db/colls', spec('manual'), { 'x-ms-offer-throughput': '800' });
  await call('POST', '/dbs/db/colls', spec('auto'), { 'x-ms-cosmos-offer-autopilot-settings': '{"maxThroughput":4000}' });
  await call('POST', '/dbs/db/colls', spec('shared'));
  const { offers } = (await controlCall('GET', '/throughput')).body;
  assert.deepEqual(offers['db/manual'], { mode: 'manual', ruPerSecond: 800 });
  assert.deepEqual(offers['db/auto'], { mode: 'autoscale', maxRuPerSecond: 4000 });
  assert.deepEqual(offers['db/shared'], { mode: 'none' });
});
