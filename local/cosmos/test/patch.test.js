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

test('the patched document shares only what no operation touched; the original stays as it was, also when a patch fails', () => {
  const original = { id: 'a', pk: 'p', g: { s: { sum: 1, n: [1, 2] }, t: { sum: 2 } }, arr: [{ x: 1 }, { y: 2 }], keep: { deep: { v: 1 } } };
  const snapshot = JSON.parse(JSON.stringify(original));
  const out = applyPatch(original, [
    { op: 'set', path: '/g/s/sum', value: 5 },
    { op: 'add', path: '/g/s/n/-', value: 3 },
    { op: 'incr', path: '/arr/1/y', value: 1 },
    { op: 'move', from: '/g/t', path: '/arr/0/t' },
    { op: 'set', path: '/arr/0/t/sum', value: 9 },
    { op: 'remove', path: '/arr/0/x' },
  ]);
  assert.deepEqual(original, snapshot);
  assert.deepEqual(out, { id: 'a', pk: 'p', g: { s: { sum: 5, n: [1, 2, 3] } }, arr: [{ t: { sum: 9 } }, { y: 3 }], keep: { deep: { v: 1 } } });
  assert.equal(out.keep, original.keep);
  assert.throws(() => applyPatch(original, [{ op: 'set', path: '/g/s/sum', value: 7 }, { op: 'remove', path: '/g/missing' }]), PatchError);
  assert.deepEqual(original, snapshot);
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
