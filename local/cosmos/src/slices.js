'use strict';

// Long work cut into slices that give the event loop back.
//
// The endpoint is one Node thread: a scan of 100,000 documents that runs in
// one go delays every other request, including TLS handshakes, by its whole
// duration, and the Java SDK turns a 10 s stall into 503s. Work that grows
// with a container's size runs through these helpers instead: it checks the
// clock every few hundred items and, once a slice has run for its budget,
// waits for setImmediate so pending I/O is served before it goes on.

const { performance } = require('perf_hooks');

// Well under the ~20 ms a request may hold the loop, leaving room for the
// item that is being processed when the budget runs out.
const SLICE_BUDGET_MS = 8;
const CHECK_EVERY = 256; // items between clock reads (a clock read costs ~50 ns)
const SORT_RUN_LENGTH = 1024;

function yieldToLoop() {
  return new Promise((resolve) => setImmediate(resolve));
}

class Slicer {
  constructor(budgetMs = SLICE_BUDGET_MS) {
    this._budgetMs = budgetMs;
    this._sliceStart = performance.now();
  }

  // Whether the slice is used up, checked every CHECK_EVERY items (`count` =
  // items done so far). Synchronous, so the common case costs no promise.
  due(count = 0) {
    return count % CHECK_EVERY === 0 && performance.now() - this._sliceStart >= this._budgetMs;
  }

  async pause() {
    await yieldToLoop();
    this._sliceStart = performance.now();
  }

  async pauseIfDue() {
    if (this.due()) await this.pause();
  }
}

// fn(item) for every item, in slices. The iterable may be a live Map
// iterator: entries deleted meanwhile are skipped, entries added are visited.
async function forEachSliced(iterable, fn, slicer = new Slicer()) {
  let n = 0;
  for (const item of iterable) {
    fn(item);
    n += 1;
    if (slicer.due(n)) await slicer.pause();
  }
}

// A sorted copy of `items` (stable), in slices: short runs sorted with
// Array.prototype.sort, then merged pairwise.
async function sortSliced(items, compare, slicer = new Slicer()) {
  let src = items.slice();
  const n = src.length;
  for (let lo = 0; lo < n; lo += SORT_RUN_LENGTH) {
    const run = src.slice(lo, lo + SORT_RUN_LENGTH).sort(compare);
    for (let i = 0; i < run.length; i += 1) src[lo + i] = run[i];
    await slicer.pauseIfDue();
  }
  let dst = new Array(n);
  let moved = 0;
  for (let width = SORT_RUN_LENGTH; width < n; width *= 2) {
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(lo + width, n);
      const hi = Math.min(lo + 2 * width, n);
      let i = lo;
      let j = mid;
      for (let k = lo; k < hi; k += 1) {
        dst[k] = i < mid && (j >= hi || compare(src[i], src[j]) <= 0) ? src[i++] : src[j++];
        moved += 1;
        if (slicer.due(moved)) await slicer.pause();
      }
    }
    [src, dst] = [dst, src];
  }
  return src;
}

module.exports = { Slicer, forEachSliced, sortSliced, yieldToLoop, SLICE_BUDGET_MS };
