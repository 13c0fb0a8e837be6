'use strict';

// Counters served by GET /stats. Benchmarks and tests read them to check what
// the server saw (e.g. how many 429s a throttled bulk load produced), so they
// count every request, including injected faults and dropped connections.

class Stats {
  constructor({ now = Date.now } = {}) {
    this._now = now;
    this.reset();
  }

  reset() {
    this._since = this._now();
    this._total = 0;
    this._byKind = {};
    this._byStatus = {};
    this._byKindStatus = {};
    this._requestCharge = 0;
    this._chargeByKind = {};
    this._status429 = 0;
    this._throttled = 0;
    this._injected = 0;
    this._dropped = 0;
    this._bulkOperations = 0;
    this._bulkOperationsThrottled = 0;
    this._bulkOperationsWithBody = 0;
    this._requestBytes = 0;
  }

  // One finished request. `throttled` marks a 429 produced by the throughput
  // budget (as opposed to one injected by a fault rule).
  record({ kind, status, charge = 0, throttled = false, injected = false, dropped = false, requestBytes = 0 }) {
    this._total += 1;
    this._requestBytes += requestBytes;
    this._byKind[kind] = (this._byKind[kind] || 0) + 1;
    const s = dropped ? 'dropped' : String(status);
    this._byStatus[s] = (this._byStatus[s] || 0) + 1;
    const ks = `${kind}:${s}`;
    this._byKindStatus[ks] = (this._byKindStatus[ks] || 0) + 1;
    if (charge > 0) {
      this._requestCharge += charge;
      this._chargeByKind[kind] = (this._chargeByKind[kind] || 0) + charge;
    }
    if (status === 429) this._status429 += 1;
    if (throttled) this._throttled += 1;
    if (injected) this._injected += 1;
    if (dropped) this._dropped += 1;
  }

  // Operations inside batch requests, some of which the budget may refuse
  // individually (answered 429 inside a 207 response), and how many results
  // carried their document back (a sink that asks for none should see 0).
  recordBatchOperations({ total, throttled, withBody = 0 }) {
    this._bulkOperations += total;
    this._bulkOperationsThrottled += throttled;
    this._bulkOperationsWithBody += withBody;
  }

  snapshot() {
    const round = (x) => Math.round(x * 100) / 100;
    const chargeByKind = {};
    for (const [k, v] of Object.entries(this._chargeByKind)) chargeByKind[k] = round(v);
    const elapsedMs = Math.max(1, this._now() - this._since);
    return {
      since: new Date(this._since).toISOString(),
      elapsedMs,
      requests: this._total,
      byKind: { ...this._byKind },
      byStatus: { ...this._byStatus },
      byKindStatus: { ...this._byKindStatus },
      requestCharge: round(this._requestCharge),
      requestChargeByKind: chargeByKind,
      ruPerSecond: round((this._requestCharge * 1000) / elapsedMs),
      status429: this._status429,
      throttled: this._throttled,
      injected: this._injected,
      dropped: this._dropped,
      batchOperations: this._bulkOperations,
      batchOperationsThrottled: this._bulkOperationsThrottled,
      batchOperationsWithBody: this._bulkOperationsWithBody,
      requestBytes: this._requestBytes,
    };
  }
}

module.exports = { Stats };
