'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { sortSliced, forEachSliced, Slicer } = require('../src/slices');
const query = require('../src/query');
const Documents = require('@vercel/cosmosdb-server/lib/account/documents').default;

test('sortSliced sorts like Array.prototype.sort, stably, across many runs', async () => {
  const items = Array.from({ length: 10000 }, (_, i) => ({ k: (i * 7919) % 1013, i }));
  const byK = (a, b) => a.k - b.k;
  const sorted = await sortSliced(items, byK, new Slicer(0));
  assert.deepEqual(sorted, items.slice().sort(byK));
  assert.equal(items[1].i, 1, 'the input is left as it was');
});

test('forEachSliced visits every item, also when it pauses after each check', async () => {
  let sum = 0;
  await forEachSliced(Array.from({ length: 1000 }, (_, i) => i), (x) => { sum += x; }, new Slicer(0));
  assert.equal(sum, 499500);
});

test('stripUndefined drops undefined elements and members at any depth', () => {
  assert.deepEqual(query.stripUndefined([1, undefined, { a: undefined, b: [undefined, 2] }]), [1, { b: [2] }]);
});

test('a sliced query over many documents answers exactly what the one-go run answers', async () => {
  const documents = new Documents({ read: () => ({ _rid: 'x', _self: 'dbs/x/colls/y/' }), userDefinedFunctions: {} }, ['/pk']);
  const docs = Array.from({ length: 5000 }, (_, i) => ({ id: `d${i}`, pk: `p${i % 37}`, v: i % 11, tags: [i % 3, 9], _rid: `r${(i * 7919) % 5000}` }));
  for (const sql of [
    'SELECT c.id, c.v FROM c WHERE c.v > 3',
    'SELECT TOP 25 c.id FROM c WHERE c.v = 2',
    'SELECT DISTINCT VALUE c.pk FROM c',
    'SELECT c.id, t FROM c JOIN t IN c.tags WHERE t > 1',
    'SELECT * FROM c OFFSET 10 LIMIT 40',
    'SELECT VALUE COUNT(1) FROM c',
    'SELECT c.id FROM c ORDER BY c.v DESC',
  ]) {
    const spec = { documents, docs, sql, parameters: [] };
    assert.deepEqual(await query.executeSliced(spec), query.execute(spec), sql);
  }
});
