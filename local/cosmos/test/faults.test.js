'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { FaultRules, FaultSpecError } = require('../src/faults');

const req = (over = {}) => ({ method: 'POST', path: '/dbs/d/colls/c/docs', kind: 'write', headers: {}, ...over });

test('no rules, no fault', () => {
  assert.deepEqual(new FaultRules().match(req()), { delayMs: 0, fault: null });
});

test('a status rule matches by kind and stops after count', () => {
  const f = new FaultRules();
  f.add({ status: 503, kind: 'write', count: 2 });
  assert.equal(f.match(req({ kind: 'read' })).fault, null);
  assert.equal(f.match(req()).fault.status, 503);
  assert.equal(f.match(req()).fault.status, 503);
  assert.equal(f.match(req()).fault, null);
  const [rule] = f.list();
  assert.equal(rule.hits, 2);
  assert.equal(rule.remaining, 0);
  assert.equal(rule.active, false);
});

test('429 gets sub-status 3200 and a retry-after by default; explicit values win', () => {
  const f = new FaultRules();
  f.add({ status: 429 });
  assert.deepEqual(
    { s: f.match(req()).fault.subStatus, r: f.match(req()).fault.retryAfterMs },
    { s: 3200, r: 100 },
  );
  f.clear();
  f.add({ status: 410, subStatus: 1002, retryAfterMs: 5 });
  const fault = f.match(req()).fault;
  assert.equal(fault.subStatus, 1002);
  assert.equal(fault.retryAfterMs, 5);
});

test('method, path regex, prefix and header matchers all have to hold', () => {
  const f = new FaultRules();
  f.add({ status: 500, method: 'get', path: '/docs/[^/]+$', pathPrefix: '/dbs/d/', header: 'x-test', headerValue: '^yes$' });
  const hit = req({ method: 'GET', path: '/dbs/d/colls/c/docs/1', headers: { 'x-test': 'yes' } });
  assert.equal(f.match(hit).fault.status, 500);
  assert.equal(f.match({ ...hit, method: 'PUT' }).fault, null);
  assert.equal(f.match({ ...hit, path: '/dbs/e/colls/c/docs/1' }).fault, null);
  assert.equal(f.match({ ...hit, headers: { 'x-test': 'no' } }).fault, null);
  assert.equal(f.match({ ...hit, headers: {} }).fault, null);
});

test('rules expire after durationMs', () => {
  const c = { t: 1000 };
  const f = new FaultRules({ now: () => c.t });
  f.add({ status: 503, durationMs: 500 });
  assert.equal(f.match(req()).fault.status, 503);
  c.t = 1500;
  assert.equal(f.match(req()).fault, null);
});

test('delay-only rules add latency and let the request through; delays add up', () => {
  const f = new FaultRules();
  f.add({ delayMs: 20 });
  f.add({ delayMs: 5, kind: 'write' });
  assert.deepEqual(f.match(req()), { delayMs: 25, fault: null });
  f.add({ status: 408, delayMs: 100, kind: 'write' });
  const m = f.match(req());
  assert.equal(m.delayMs, 125);
  assert.equal(m.fault.status, 408);
});

test('the first terminal rule decides; later ones are not consumed', () => {
  const f = new FaultRules();
  f.add({ drop: true, count: 1 });
  f.add({ status: 449, count: 1 });
  assert.equal(f.match(req()).fault.drop, true);
  assert.equal(f.match(req()).fault.status, 449);
  assert.equal(f.match(req()).fault, null);
});

test('invalid specs are refused with a reason', () => {
  const f = new FaultRules();
  for (const bad of [
    {},
    { status: 200 },
    { status: 503, drop: true },
    { status: 503, kind: 'everything' },
    { status: 503, path: '(' },
    { status: 503, count: 0 },
    { status: 503, colour: 'red' },
    { headerValue: 'x', status: 500 },
  ]) {
    assert.throws(() => f.add(bad), FaultSpecError, JSON.stringify(bad));
  }
});

test('a rule added with an existing id replaces it; remove and clear', () => {
  const f = new FaultRules();
  f.add({ id: 'x', status: 500 });
  f.add({ id: 'x', status: 503 });
  assert.equal(f.list().length, 1);
  assert.equal(f.match(req()).fault.status, 503);
  assert.equal(f.remove('x'), true);
  assert.equal(f.remove('x'), false);
  f.add({ status: 500 });
  assert.equal(f.clear(), 1);
});
