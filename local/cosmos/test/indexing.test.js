'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { termsOf } = require('../src/indexing');

const bucket = {
  pk: 'shop|c-1', id: 'spend|hour|1', grade: 'spend', unit: 'hour', bucket: '2026-01-01T00:00:00Z',
  sum: 10.5, count: 2, min: 1.5, max: 9, ver: 2, ttl: 3024000, updatedAt: '2026-01-01T00:10:00Z',
  _rid: 'x', _etag: '"1"', _ts: 1, _self: 's', _attachments: 'a',
};
const container = (indexingPolicy) => ({ data: indexingPolicy === undefined ? {} : { indexingPolicy } });

test('the default policy indexes every property but the id, the partition key and system properties', () => {
  assert.equal(termsOf(container(undefined), bucket, '/pk'), 10);
  assert.equal(termsOf(container({ indexingMode: 'consistent', includedPaths: [{ path: '/*' }],
    excludedPaths: [{ path: '/"_etag"/?' }] }), bucket, '/pk'), 10);
});

test("Tally's policy indexes only what read-service queries: grade, unit and bucket", () => {
  const tally = container({ indexingMode: 'consistent', includedPaths: [{ path: '/grade/?' }, { path: '/unit/?' }, { path: '/bucket/?' }],
    excludedPaths: [{ path: '/*' }] });
  assert.equal(termsOf(tally, bucket, '/pk'), 3);
});

test('the more precise path wins; nested objects and arrays count each leaf', () => {
  const doc = { id: 'a', pk: 'p', a: { b: 1, c: { d: 2, e: 3 } }, tags: ['x', 'y', 'z'] };
  assert.equal(termsOf(container({ includedPaths: [{ path: '/*' }], excludedPaths: [{ path: '/a/c/*' }] }), doc, '/pk'), 4);
  assert.equal(termsOf(container({ includedPaths: [{ path: '/a/c/d/?' }], excludedPaths: [{ path: '/*' }] }), doc, '/pk'), 1);
  assert.equal(termsOf(container({ includedPaths: [{ path: '/tags/[]/?' }], excludedPaths: [{ path: '/*' }] }), doc, '/pk'), 3);
});

test('indexing mode none indexes nothing', () => {
  assert.equal(termsOf(container({ indexingMode: 'none', automatic: false }), bucket, '/pk'), 0);
});
