'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { applyPatch, parsePatchBody, PatchError } = require('../src/patch');

const doc = () => ({ id: 'a', pk: 'p', n: 1, o: { x: 1 }, arr: [1, 2, 3], _etag: 'e' });

test('set, incr, add, remove, replace, move', () => {
  const out = applyPatch(doc(), [
    { op: 'set', path: '/s', value: 'v' },
    { op: 'incr', path: '/n', value: 4 },
    { op: 'incr', path: '/fresh', value: 2.5 },
    { op: 'add', path: '/arr/1', value: 9 },
    { op: 'add', path: '/arr/-', value: 7 },
    { op: 'remove', path: '/o/x' },
    { op: 'replace', path: '/arr/0', value: 0 },
    { op: 'move', from: '/s', path: '/o/moved' },
  ]);
  assert.deepEqual(out, { id: 'a', pk: 'p', n: 5, fresh: 2.5, o: { moved: 'v' }, arr: [0, 9, 2, 3, 7], _etag: 'e' });
});

test('the original document is not modified', () => {
  const d = doc();
  applyPatch(d, [{ op: 'set', path: '/o/x', value: 2 }]);
  assert.equal(d.o.x, 1);
});

test('replace and remove need an existing target; no intermediate objects are created', () => {
  assert.throws(() => applyPatch(doc(), [{ op: 'replace', path: '/missing', value: 1 }]), PatchError);
  assert.throws(() => applyPatch(doc(), [{ op: 'remove', path: '/missing' }]), PatchError);
  assert.throws(() => applyPatch(doc(), [{ op: 'set', path: '/a/b/c', value: 1 }]), PatchError);
  assert.throws(() => applyPatch(doc(), [{ op: 'incr', path: '/o', value: 1 }]), /non-numeric/);
});

test('id, system properties and the partition key are protected', () => {
  assert.throws(() => applyPatch(doc(), [{ op: 'set', path: '/id', value: 'b' }]), /id/);
  assert.throws(() => applyPatch(doc(), [{ op: 'set', path: '/_etag', value: 'x' }]), /system property/);
  assert.throws(() => applyPatch(doc(), [{ op: 'remove', path: '/pk' }], { protectedPaths: ['/pk'] }), /partition key/);
});

test('at most 10 operations', () => {
  const ops = Array.from({ length: 11 }, (_, i) => ({ op: 'set', path: `/f${i}`, value: i }));
  assert.throws(() => applyPatch(doc(), ops), /at most 10/);
});

test('parsePatchBody accepts the SDK shape and keeps the condition verbatim', () => {
  const { operations, condition } = parsePatchBody({ operations: [{ op: 'set', path: '/a', value: 1 }], condition: 'from c where c.Name = "X"' });
  assert.equal(operations.length, 1);
  assert.equal(condition, 'from c where c.Name = "X"');
  assert.throws(() => parsePatchBody({ ops: [] }), PatchError);
});
