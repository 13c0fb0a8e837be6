'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { ThroughputBudget } = require('../src/throughput');

function clock(start = 10_000) {
  const c = { t: start, now: () => c.t };
  return c;
}

test('without a limit everything is admitted', () => {
  const b = new ThroughputBudget();
  b.charge('db/c', 1e9);
  assert.deepEqual(b.tryAdmit('db/c'), { admitted: true });
});

test('requests are admitted until the second budget is spent, then 429 until the next second', () => {
  const c = clock(10_250);
  const b = new ThroughputBudget({ defaultRuPerSecond: 100, now: c.now });
  for (let i = 0; i < 10; i += 1) {
    assert.equal(b.tryAdmit('k').admitted, true, `request ${i}`);
    b.charge('k', 10);
  }
  const refused = b.tryAdmit('k');
  assert.equal(refused.admitted, false);
  assert.equal(refused.retryAfterMs, 750);
  c.t = 11_000;
  assert.equal(b.tryAdmit('k').admitted, true);
});

test('an overdraft is paid back from the following seconds', () => {
  const c = clock(20_000);
  const b = new ThroughputBudget({ defaultRuPerSecond: 100, now: c.now });
  assert.equal(b.tryAdmit('k').admitted, true);
  b.charge('k', 250); // one big request overdraws by 150
  c.t = 21_100;
  const refused = b.tryAdmit('k');
  assert.equal(refused.admitted, false, 'still 150 spent after one second');
  assert.equal(refused.retryAfterMs, 900);
  c.t = 22_000;
  assert.equal(b.tryAdmit('k').admitted, true);
});

test('containers are metered separately and can override the default', () => {
  const c = clock();
  const b = new ThroughputBudget({ defaultRuPerSecond: 10, now: c.now });
  b.charge('a', 10);
  assert.equal(b.tryAdmit('a').admitted, false);
  assert.equal(b.tryAdmit('b').admitted, true);
  b.setContainer('a', 0); // unlimited despite the default
  assert.equal(b.tryAdmit('a').admitted, true);
  b.setContainer('a', null); // back to the default
  assert.equal(b.limitFor('a'), 10);
});

test('invalid rates are rejected', () => {
  assert.throws(() => new ThroughputBudget({ defaultRuPerSecond: -5 }), RangeError);
  assert.throws(() => new ThroughputBudget().setDefault('lots'), RangeError);
});

test('over many seconds the admitted charge converges to the budget', () => {
  const c = clock(0);
  const b = new ThroughputBudget({ defaultRuPerSecond: 1000, now: c.now });
  let charged = 0;
  for (c.t = 0; c.t < 10_000; c.t += 1) { // one attempt per ms, 7 RU each
    if (b.tryAdmit('k').admitted) {
      b.charge('k', 7);
      charged += 7;
    }
  }
  assert.ok(charged >= 9_990 && charged <= 10_010, `charged ${charged} in 10 s`);
});
