'use strict';

// Provisioned throughput, per container, in RU per second.
//
// The service meters each container against a per-second budget: a request is
// admitted while the current second still has budget, its charge is booked
// after it ran (so the last admitted request may overdraw), and the overdraft
// is paid back out of the following seconds' budgets. A request that arrives
// when nothing is left gets 429 (sub-status 3200) with x-ms-retry-after-ms
// pointing at the second in which budget is available again. Over any longer
// interval the admitted load therefore converges to the budget, which is what
// a client's congestion control has to discover.

const THROTTLE_SUB_STATUS = 3200;

function validateRate(ruPerSecond) {
  if (ruPerSecond === null || ruPerSecond === undefined || ruPerSecond === 0) return null;
  const n = Number(ruPerSecond);
  if (!Number.isFinite(n) || n < 0) {
    throw new RangeError(`throughput must be a positive number of RU/s (or 0/null for unlimited), got ${ruPerSecond}`);
  }
  return n;
}

class ThroughputBudget {
  constructor({ defaultRuPerSecond = null, now = Date.now } = {}) {
    this._now = now;
    this._default = validateRate(defaultRuPerSecond);
    this._perContainer = new Map(); // key -> RU/s or null (explicitly unlimited)
    this._meters = new Map(); // key -> { second, spent }
    this._offers = new Map(); // key -> the throughput asked for when the container was created (recorded, not enforced)
  }

  static key(dbId, collId) {
    return `${dbId}/${collId}`;
  }

  setDefault(ruPerSecond) {
    this._default = validateRate(ruPerSecond);
  }

  // `null` removes the override so the container follows the default again;
  // 0 makes the container unlimited even when a default is set.
  setContainer(key, ruPerSecond) {
    if (ruPerSecond === null || ruPerSecond === undefined) {
      this._perContainer.delete(key);
    } else {
      this._perContainer.set(key, validateRate(ruPerSecond));
    }
  }

  limitFor(key) {
    return this._perContainer.has(key) ? this._perContainer.get(key) : this._default;
  }

  _meter(key, limit) {
    const second = Math.floor(this._now() / 1000);
    let m = this._meters.get(key);
    if (!m) {
      m = { second, spent: 0 };
      this._meters.set(key, m);
    } else if (second > m.second) {
      m.spent = Math.max(0, m.spent - limit * (second - m.second));
      m.second = second;
    }
    return m;
  }

  // -> { admitted: true } or { admitted: false, retryAfterMs }
  tryAdmit(key) {
    const limit = this.limitFor(key);
    if (limit === null) return { admitted: true };
    const m = this._meter(key, limit);
    if (m.spent < limit) return { admitted: true };
    // Smallest k with spent - k*limit < limit: the debt is paid off k seconds on.
    const k = Math.floor(m.spent / limit);
    const retryAfterMs = Math.max(1, (m.second + k) * 1000 - this._now());
    return { admitted: false, retryAfterMs };
  }

  charge(key, ru) {
    const limit = this.limitFor(key);
    if (limit === null || !(ru > 0)) return;
    this._meter(key, limit).spent += ru;
  }

  reset() {
    this._meters.clear();
  }

  recordOffer(key, offer) {
    this._offers.set(key, offer);
  }

  snapshot() {
    const containers = {};
    for (const [key, value] of this._perContainer) containers[key] = value;
    const meters = {};
    for (const [key, m] of this._meters) meters[key] = { second: m.second, spent: Math.round(m.spent * 100) / 100 };
    return { defaultRuPerSecond: this._default, containers, meters, offers: Object.fromEntries(this._offers) };
  }
}

module.exports = { ThroughputBudget, THROTTLE_SUB_STATUS, validateRate };
