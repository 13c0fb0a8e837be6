'use strict';

// Time to live, with the service's rules:
// - container `defaultTtl` absent/null: TTL is off, item `ttl` is ignored;
// - `defaultTtl` -1: items live forever unless they carry a positive `ttl`;
// - `defaultTtl` n > 0: items expire n seconds after their last write unless
//   they carry their own `ttl` (-1 = never, n > 0 = n seconds).
// An expired item is gone for reads, queries and writes from that moment on
// (the service guarantees this even before its background purge runs); we
// filter on access and purge in the background to give memory back.

const { Slicer, forEachSliced } = require('./slices');

const SWEEP_INTERVAL_MS = 5000;

function isTtlEnabled(collectionData) {
  return collectionData && collectionData.defaultTtl !== undefined && collectionData.defaultTtl !== null;
}

// Effective TTL in seconds, or null for "never expires".
function effectiveTtlSeconds(collectionData, doc) {
  if (!isTtlEnabled(collectionData)) return null;
  const itemTtl = doc.ttl;
  const ttl = itemTtl !== undefined && itemTtl !== null ? itemTtl : collectionData.defaultTtl;
  if (typeof ttl !== 'number' || ttl <= 0) return null; // -1 (or a value the write path rejected)
  return ttl;
}

// The expiry instant in ms, or Infinity. `writtenAtMs` is when the current
// version of the document was written; `_ts` (seconds) is the fallback.
function expiresAtMs(collectionData, doc, writtenAtMs) {
  const ttl = effectiveTtlSeconds(collectionData, doc);
  if (ttl === null) return Infinity;
  const written = writtenAtMs !== undefined ? writtenAtMs : doc._ts * 1000;
  return written + ttl * 1000;
}

function isExpired(collectionData, doc, writtenAtMs, now = Date.now()) {
  return now >= expiresAtMs(collectionData, doc, writtenAtMs);
}

// Item `ttl` must be -1 or a positive integer, as on the service; returns an
// error message or null.
function validateItemTtl(doc) {
  if (!doc || doc.ttl === undefined || doc.ttl === null) return null;
  const t = doc.ttl;
  if (Number.isInteger(t) && (t === -1 || t > 0)) return null;
  return `The value of the 'ttl' property must be -1 or a positive integer (got ${JSON.stringify(t)}).`;
}

function validateDefaultTtl(collectionBody) {
  if (!collectionBody || collectionBody.defaultTtl === undefined || collectionBody.defaultTtl === null) return null;
  const t = collectionBody.defaultTtl;
  if (Number.isInteger(t) && (t === -1 || t > 0)) return null;
  return `The value of 'defaultTtl' must be -1 or a positive integer (got ${JSON.stringify(t)}).`;
}

// Periodically drops expired documents of every container with TTL on.
// `forEachCollection(fn)` enumerates containers; `purge(collection, index, data)` removes one.
// A sweep walks every document, so it runs in slices (slices.js) and the next
// one starts only after it finished.
function startSweeper({ forEachCollection, purge, intervalMs = SWEEP_INTERVAL_MS, log = () => {} }) {
  let sweeping = false;
  const timer = setInterval(() => {
    if (sweeping) return;
    sweeping = true;
    sweep({ forEachCollection, purge })
      .catch((e) => log(`TTL sweep failed: ${e.stack || e}`))
      .finally(() => {
        sweeping = false;
      });
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

async function sweep({ forEachCollection, purge }) {
  const now = Date.now();
  const targets = [];
  forEachCollection((collection, index) => targets.push([collection, index]));
  const slicer = new Slicer();
  for (const [collection, index] of targets) {
    const collectionData = collection.read();
    if (!isTtlEnabled(collectionData)) continue;
    // The index is walked live: purging deletes entries behind the iterator,
    // which a Map allows.
    await forEachSliced(index, ([rid, item]) => {
      const data = item.read();
      if (data && isExpired(collectionData, data, index.writtenAt.get(rid), now)) purge(collection, index, data);
    }, slicer);
  }
}

module.exports = {
  isTtlEnabled,
  effectiveTtlSeconds,
  expiresAtMs,
  isExpired,
  validateItemTtl,
  validateDefaultTtl,
  startSweeper,
  sweep,
};
