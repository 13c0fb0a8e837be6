'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const cosmosQuery = require('@zeit/cosmosdb-query').default;
const query = require('../src/query');

// The executor's parse cache, as the package's Documents object offers it.
const documents = { _getQuery: (sql) => cosmosQuery(sql), _userDefinedFunctions: () => ({}) };

const docs = Array.from({ length: 25 }, (_, i) => ({ id: `d${i}`, pk: i % 2 ? 'odd' : 'even', v: i, _rid: `r${String(i).padStart(3, '0')}` }));

const run = (sql, parameters = []) => query.execute({ documents, docs, sql, parameters });

test('linearized code gives the same results as the original', () => {
  for (const sql of [
    'SELECT * FROM c',
    'SELECT c.id FROM c WHERE c.v > 10 ORDER BY c.v DESC',
    'SELECT VALUE COUNT(1) FROM c WHERE c.pk = "odd"',
    'SELECT TOP 3 * FROM root r ORDER BY r.v',
  ]) {
    const original = cosmosQuery(sql).exec(docs, {}).result;
    assert.deepEqual(run(sql), original, sql);
  }
  assert.ok(!query.linearize(cosmosQuery('SELECT * FROM c')).code.includes('[...$, {'));
});

test('a query over 100k documents runs in linear time', () => {
  const many = Array.from({ length: 100_000 }, (_, i) => ({ id: `x${i}`, pk: 'p', v: i, _rid: `r${i}` }));
  const t0 = Date.now();
  const rows = query.execute({ documents, docs: many, sql: 'SELECT VALUE COUNT(1) FROM c WHERE c.v >= 50000', parameters: [] });
  assert.deepEqual(rows, [50_000]);
  assert.ok(Date.now() - t0 < 5000, `took ${Date.now() - t0} ms`);
});

test('aggregates, parameters, TOP', () => {
  assert.deepEqual(run('SELECT VALUE SUM(c.v) FROM c WHERE c.pk = @pk', [{ name: '@pk', value: 'even' }]), [156]);
  assert.deepEqual(run('SELECT MIN(c.v) AS lo, MAX(c.v) AS hi, COUNT(1) AS n FROM c'), [{ lo: 0, hi: 24, n: 25 }]);
  assert.deepEqual(run('SELECT TOP 2 VALUE c.v FROM c ORDER BY c.v DESC'), [24, 23]);
});

test('DISTINCT and OFFSET/LIMIT are applied around the executor', () => {
  assert.deepEqual(run('SELECT DISTINCT VALUE c.pk FROM c ORDER BY c.pk'), ['even', 'odd']);
  assert.deepEqual(run('SELECT VALUE c.v FROM c ORDER BY c.v OFFSET 3 LIMIT 2'), [3, 4]);
  assert.deepEqual(run('SELECT VALUE c.v FROM c ORDER BY c.v OFFSET @o LIMIT @l', [{ name: '@o', value: 20 }, { name: '@l', value: 10 }]), [20, 21, 22, 23, 24]);
});

test('syntax errors become QueryError', () => {
  assert.throws(() => run('SELEC * FROM c'), query.QueryError);
});

test('paging walks the whole result exactly once with opaque continuations', () => {
  const cursors = new query.CursorStore();
  let executions = 0;
  const runAll = () => {
    executions += 1;
    return { rows: run('SELECT VALUE c.v FROM c ORDER BY c.v'), scanned: docs.length };
  };
  const seen = [];
  let continuation;
  let pages = 0;
  do {
    const p = query.page({ cursors, continuation, maxItemCount: '7', run: runAll });
    seen.push(...p.rows);
    continuation = p.continuation;
    pages += 1;
  } while (continuation);
  assert.deepEqual(seen, Array.from({ length: 25 }, (_, i) => i));
  assert.equal(pages, 4);
  assert.equal(executions, 1, 'later pages come from the cursor');
});

test('an expired cursor is re-run and skipped to its offset', () => {
  const c = { t: 0 };
  const cursors = new query.CursorStore({ now: () => c.t });
  const runAll = () => ({ rows: [1, 2, 3, 4, 5], scanned: 5 });
  const first = query.page({ cursors, maxItemCount: '2', run: runAll });
  c.t = 10 * 60 * 1000;
  const second = query.page({ cursors, continuation: first.continuation, maxItemCount: '2', run: runAll });
  assert.deepEqual(second.rows, [3, 4]);
  assert.equal(second.scanned, 5);
});

test('default page size is 100 and -1 means as many as fit', () => {
  const cursors = new query.CursorStore();
  const rows = Array.from({ length: 250 }, (_, i) => i);
  assert.equal(query.page({ cursors, run: () => ({ rows, scanned: 250 }) }).rows.length, 100);
  assert.equal(query.page({ cursors, maxItemCount: '-1', run: () => ({ rows, scanned: 250 }) }).rows.length, 250);
  assert.throws(() => query.page({ cursors, continuation: 'garbage', run: () => ({ rows, scanned: 0 }) }), query.QueryError);
});

test('SELECT VALUE detection for the query plan', () => {
  assert.equal(query.hasSelectValue('SELECT VALUE COUNT(1) FROM c'), true);
  assert.equal(query.hasSelectValue('select top 5 value c.id from c'), true);
  assert.equal(query.hasSelectValue('SELECT c.value FROM c'), false);
});
