'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { PartitionIndex, partitionKeyString, NONE_KEY } = require('../src/partition-index');

const item = (data) => ({ read: () => data });

test('keeps per-partition maps in step with set and delete', () => {
  const idx = new PartitionIndex(['pk']);
  idx.set('r1', item({ id: 'a', pk: 'p1' }));
  idx.set('r2', item({ id: 'b', pk: 'p1' }));
  idx.set('r3', item({ id: 'a', pk: 'p2' }));
  assert.equal(idx.partition(partitionKeyString('p1')).size, 2);
  assert.equal(idx.find(partitionKeyString('p2'), 'a').read().pk, 'p2');
  idx.delete('r1');
  assert.equal(idx.find(partitionKeyString('p1'), 'a'), undefined);
  idx.delete('r2');
  assert.equal(idx.partition(partitionKeyString('p1')), undefined, 'empty partitions are dropped');
  assert.equal(idx.size, 1);
});

test('re-setting a rid moves the document (replace keeps the rid)', () => {
  const idx = new PartitionIndex(['pk']);
  idx.set('r1', item({ id: 'a', pk: 'p1', v: 1 }));
  idx.set('r1', item({ id: 'a', pk: 'p1', v: 2 }));
  assert.equal(idx.partition(partitionKeyString('p1')).size, 1);
  assert.equal(idx.find(partitionKeyString('p1'), 'a').read().v, 2);
});

test('partition key values compare as JSON; missing and {} are the NONE partition', () => {
  assert.notEqual(partitionKeyString(1), partitionKeyString('1'));
  assert.equal(partitionKeyString(undefined), NONE_KEY);
  assert.equal(partitionKeyString({}), NONE_KEY);
  assert.equal(partitionKeyString(null), 'null');
});

test('is built from an existing Map', () => {
  const idx = new PartitionIndex(['a', 'b'], new Map([['r1', item({ id: 'x', a: { b: 'deep' } })]]));
  assert.ok(idx.find(partitionKeyString('deep'), 'x'));
  assert.ok(idx.writtenAt.get('r1') > 0);
});
