'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const RU = require('../src/request-units');

test('a point read of a document up to 1 KB costs 1 RU', () => {
  assert.equal(RU.pointRead(200), 1);
  assert.equal(RU.pointRead(1024), 1);
});

test('reads grow by ~0.1 RU per extra KB (100 KB ~ 10.9 RU)', () => {
  assert.equal(RU.pointRead(100 * 1024), 10.9);
});

test('small writes cost 5-11 RU: create < replace, delete ~ create', () => {
  const create = RU.create(500);
  const replace = RU.replace(500);
  assert.ok(create >= 5 && create <= 10, `create ${create}`);
  assert.ok(replace > create && replace <= 11, `replace ${replace}`);
  assert.equal(RU.remove(500), create);
});

test('writes follow the index terms: fewer indexed properties, cheaper writes', () => {
  assert.equal(RU.create(1024), 5.71); // 10 terms: every property of a small document indexed
  assert.equal(RU.replace(1024), 10.29);
  assert.equal(RU.create(1024, 3), 5.01);
  assert.equal(RU.replace(1024, 3, 3), 8.89);
  assert.equal(RU.create(1024, 0), RU.RU.CREATE_BASE);
});

test('bigger documents cost more to write', () => {
  assert.ok(RU.create(50 * 1024) > RU.create(1024) + 20);
});

test('queries are charged by documents scanned and returned', () => {
  const one = RU.query({ scanned: 1, returned: 1, returnedBytes: 300 });
  assert.ok(one > 2.5 && one < 3.5, `one-document query ${one}`);
  const wide = RU.query({ scanned: 10000, returned: 10, returnedBytes: 3000 });
  assert.ok(wide > one + 90, `scanning 10k documents must be much dearer: ${wide}`);
  assert.ok(RU.query({ scanned: 100, returned: 100, returnedBytes: 30000 }) > RU.query({ scanned: 100, returned: 1, returnedBytes: 300 }));
});

test('sizeOf measures serialized UTF-8 bytes', () => {
  assert.equal(RU.sizeOf({ a: 'é' }), Buffer.byteLength('{"a":"é"}'));
  assert.equal(RU.sizeOf(undefined), 0);
});
