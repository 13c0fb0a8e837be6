'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { classify, normalizePath } = require('../src/routing');

const req = (method, headers = {}) => ({ method, headers });

test('paths lose doubled leading and trailing slashes and the query string', () => {
  assert.equal(normalizePath('//dbs/d/colls/c/docs/?x=1'), '/dbs/d/colls/c/docs');
  assert.equal(normalizePath('/'), '/');
});

test('a document path is an item with decoded ids; GET reads, anything else writes', () => {
  assert.deepEqual(classify(req('GET'), '/dbs/d%7C1/colls/c/docs/g%7Chour%7C5'),
    { kind: 'read', route: 'item', dbId: 'd|1', collId: 'c', docId: 'g|hour|5' });
  assert.equal(classify(req('PATCH'), '/dbs/d/colls/c/docs/x').kind, 'write');
  assert.equal(classify(req('GET'), '/dbs/d/colls/c/docs/%E0%A4%A').docId, '%E0%A4%A');
});

test('a POST to the docs feed is told apart by its headers', () => {
  const kind = (headers) => classify(req('POST', headers), '/dbs/d/colls/c/docs').kind;
  assert.equal(kind({ 'x-ms-cosmos-is-query-plan-request': 'True', 'x-ms-documentdb-isquery': 'true' }), 'queryplan');
  assert.equal(kind({ 'x-ms-documentdb-isquery': 'true' }), 'query');
  assert.equal(kind({ 'content-type': 'application/query+json' }), 'query');
  assert.equal(kind({ 'x-ms-cosmos-is-batch-request': 'true' }), 'batch');
  assert.equal(kind({}), 'write');
  assert.equal(classify(req('GET'), '/dbs/d/colls/c/docs').kind, 'readfeed');
});

test('every other path is metadata for the package', () => {
  assert.deepEqual(classify(req('GET'), '/dbs/d/colls/c/pkranges'), { kind: 'metadata', route: 'stock' });
  assert.deepEqual(classify(req('GET'), '/'), { kind: 'metadata', route: 'stock' });
});
