'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const ttl = require('../src/ttl');

test('TTL is off without defaultTtl, even if the item has a ttl', () => {
  assert.equal(ttl.effectiveTtlSeconds({}, { ttl: 5 }), null);
});

test('defaultTtl -1: only items with their own ttl expire', () => {
  assert.equal(ttl.effectiveTtlSeconds({ defaultTtl: -1 }, {}), null);
  assert.equal(ttl.effectiveTtlSeconds({ defaultTtl: -1 }, { ttl: 7 }), 7);
});

test('defaultTtl n: items expire after n unless their ttl is -1 or another value', () => {
  assert.equal(ttl.effectiveTtlSeconds({ defaultTtl: 60 }, {}), 60);
  assert.equal(ttl.effectiveTtlSeconds({ defaultTtl: 60 }, { ttl: -1 }), null);
  assert.equal(ttl.effectiveTtlSeconds({ defaultTtl: 60 }, { ttl: 5 }), 5);
});

test('expiry is counted from the last write in ms', () => {
  const coll = { defaultTtl: 2 };
  assert.equal(ttl.isExpired(coll, {}, 10_000, 11_999), false);
  assert.equal(ttl.isExpired(coll, {}, 10_000, 12_000), true);
  assert.equal(ttl.isExpired(coll, { _ts: 10 }, undefined, 12_000), true);
});

test('item ttl must be -1 or a positive integer', () => {
  assert.equal(ttl.validateItemTtl({ ttl: 10 }), null);
  assert.equal(ttl.validateItemTtl({ ttl: -1 }), null);
  assert.equal(ttl.validateItemTtl({}), null);
  assert.match(ttl.validateItemTtl({ ttl: 0 }), /ttl/);
  assert.match(ttl.validateItemTtl({ ttl: 1.5 }), /ttl/);
  assert.match(ttl.validateItemTtl({ ttl: '5' }), /ttl/);
});
