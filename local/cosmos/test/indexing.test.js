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

test('where an included and an excluded pattern are as precise, the excluded one wins', () => {
  const doc = { id: 'a', pk: 'p', a: { b: 1, c: { d: 2 } }, e: 3 };
  assert.equal(termsOf(container({ includedPaths: [{ path: '/a/*' }, { path: '/e/?' }], excludedPaths: [{ path: '/a/*' }] }), doc, '/pk'), 1);
  assert.equal(termsOf(container({ includedPaths: [{ path: '/*' }], excludedPaths: [{ path: '/*' }] }), doc, '/pk'), 0);
});

test('indexing mode none indexes nothing', () => {
  assert.equal(termsOf(container({ indexingMode: 'none', automatic: false }), bucket, '/pk'), 0);
});

// The charge walks a document once and skips what no pattern includes; it must count what indexing every leaf
// path one by one counts, on any document and policy.
test('the pruned walk counts what checking every leaf path counts', () => {
  const { compile } = require('../src/indexing');
  const SYSTEM = new Set(['_rid', '_self', '_etag', '_attachments', '_ts', '_lsn', 'id']);
  const matches = (r, path) => (r.subtree ? path.length >= r.prefix.length : path.length === r.prefix.length)
    && r.prefix.every((seg, i) => seg === path[i]);
  const reference = (policy, doc) => {
    const included = (policy.includedPaths || [{ path: '/*' }]).map((p) => compile(p.path));
    const excluded = (policy.excludedPaths || []).map((p) => compile(p.path));
    const leaves = (v, path, out) => {
      if (v !== null && typeof v === 'object') {
        if (Array.isArray(v)) v.forEach((x) => leaves(x, path.concat('[]'), out));
        else for (const [k, x] of Object.entries(v)) leaves(x, path.concat(k), out);
      } else out.push(path);
      return out;
    };
    let n = 0;
    for (const path of leaves(doc, [], [])) {
      if (path.length === 1 && (SYSTEM.has(path[0]) || path[0] === 'pk')) continue;
      let best = null;
      for (const r of included) if (matches(r, path) && (!best || r.precision > best.precision)) best = { precision: r.precision, inc: true };
      for (const r of excluded) if (matches(r, path) && (!best || r.precision >= best.precision)) best = { precision: r.precision, inc: false };
      if (best && best.inc) n += 1;
    }
    return n;
  };
  let seed = 7;
  const rand = (n) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const keys = ['a', 'b', 'c', 'pk', 'id', '_ts'];
  const value = (depth) => {
    const kind = depth > 3 ? 0 : rand(4);
    if (kind === 0) return [1, 'x', null, true][rand(4)];
    if (kind === 1) return Array.from({ length: rand(3) }, () => value(depth + 1));
    const o = {};
    for (let i = rand(4); i > 0; i -= 1) o[keys[rand(keys.length)]] = value(depth + 1);
    return o;
  };
  const pattern = () => {
    const parts = Array.from({ length: rand(3) }, () => ['a', 'b', 'c', '[]'][rand(4)]);
    return `/${parts.concat(['*', '?', '*'][rand(3)]).join('/')}`.replace(/^\/\?$/, '/*');
  };
  for (let i = 0; i < 2000; i += 1) {
    const policy = {
      includedPaths: Array.from({ length: 1 + rand(3) }, () => ({ path: pattern() })),
      excludedPaths: Array.from({ length: rand(3) }, () => ({ path: pattern() })),
    };
    const doc = value(0);
    assert.equal(termsOf(container(policy), doc, '/pk'), reference(policy, doc), JSON.stringify({ policy, doc }));
  }
});
