'use strict';

// How long the event loop was kept from running, served by GET /loop.
//
// Everything here runs on one thread: a request that computes for 200 ms
// delays every other request, TLS handshake and control call by 200 ms, and
// the Java SDK's connection and handshake timeouts turn that into 503s. The
// histogram samples the loop every RESOLUTION_MS and records the time between
// samples; less the interval itself, that is how late each sample ran, so
// p99/max say directly whether some handler holds the loop.
// Requests are counted in the same window so a figure can be read against the
// load that produced it.

const { monitorEventLoopDelay, performance } = require('perf_hooks');

// A 1 ms timer costs little next to request handling and catches stalls of a
// few ms that a coarser timer would fold into its own interval.
const RESOLUTION_MS = 1;

const NS_PER_MS = 1e6;

class LoopMonitor {
  constructor({ resolutionMs = RESOLUTION_MS } = {}) {
    this._resolutionMs = resolutionMs;
    this._histogram = monitorEventLoopDelay({ resolution: resolutionMs });
    this._histogram.enable();
    this.reset();
  }

  reset() {
    this._histogram.reset();
    this._since = Date.now();
    this._utilizationStart = performance.eventLoopUtilization();
    this._requests = 0;
    this._byKind = {};
  }

  // One request answered (or dropped) on the Cosmos port.
  recordRequest(kind) {
    this._requests += 1;
    this._byKind[kind] = (this._byKind[kind] || 0) + 1;
  }

  snapshot() {
    const h = this._histogram;
    const samples = h.count;
    const ms = (ns) => {
      if (samples === 0) return 0;
      const late = Math.max(0, ns / NS_PER_MS - this._resolutionMs);
      return Math.round(late * 100) / 100;
    };
    const utilization = performance.eventLoopUtilization(this._utilizationStart).utilization;
    return {
      p50Ms: ms(h.percentile(50)),
      p99Ms: ms(h.percentile(99)),
      maxMs: ms(h.max),
      meanMs: ms(h.mean),
      samples,
      requests: this._requests,
      requestsByKind: { ...this._byKind },
      utilization: Math.round(utilization * 1000) / 1000,
      since: new Date(this._since).toISOString(),
      elapsedMs: Date.now() - this._since,
    };
  }

  stop() {
    this._histogram.disable();
  }
}

module.exports = { LoopMonitor };
