'use strict';

// Request-unit model. The real service prices an operation by the work it does
// (bytes read or written, index terms touched, documents a query loads); these
// constants reproduce its published figures with the default "index everything"
// policy, so budgets and 429 behaviour seen locally are in the same range as in
// Azure. Writes follow the service's published charge by document size (a
// curve through its table, WRITE_CURVE) and the number of index terms, so both
// fewer, larger documents and a narrower indexing policy are priced as there.
// README.md explains the model.

const KB = 1024;

// Write charge by document size at the model's reference index-term count
// (RU.REFERENCE_TERMS): Microsoft Learn, "Understand request units consumption
// in Azure Cosmos DB", table "Document size" (column "Write Operation"). Points
// are [KB, RU]; between them the charge is interpolated linearly in bytes, below
// the first point it is the first point's (the floor: a write costs at least
// what a 1 KB write does), past the last one it goes on with the last segment's
// slope (only documents a few hundred bytes over 2 MB with system properties get
// there). README.md ("Request units") says why linear in bytes.
const WRITE_CURVE = Object.freeze([
  [1, 4.95],
  [2, 6.29],
  [4, 6.67],
  [8, 7.04],
  [16, 9.52],
  [32, 11.23],
  [64, 22.67],
  [128, 48.19],
  [256, 98.29],
  [512, 184.57],
  [1024, 625.0],
  [2048, 1250.0],
].map((p) => Object.freeze(p)));

const RU = Object.freeze({
  // Point read of a document up to 1 KB is the unit the service defines as 1 RU;
  // every further KB adds ~0.1 RU (a 100 KB read costs ~10 RU).
  READ_BASE: 1.0,
  READ_PER_EXTRA_KB: 0.1,
  // Writes pay for storing the document (WRITE_CURVE, by size) and for the index
  // terms they add or remove (indexing.js counts them under the container's
  // indexing policy), as the service documents: narrowing the policy makes
  // writes cheaper. The published sizes are calibrated at REFERENCE_TERMS terms
  // (a small document with every property indexed); each term more or fewer
  // adds or takes off INDEX_TERM. So a create of 1 KB with 10 indexed terms
  // costs 4.95 RU, with 3 terms 4.25 RU. How the charge depends on the terms is
  // this model's choice, not a published figure.
  INDEX_TERM: 0.1,
  REFERENCE_TERMS: 10,
  // Index terms of a document whose terms were not counted.
  DEFAULT_TERMS: 10,
  // Replacing (or upserting over an existing document, or patching it) deletes
  // the old document and inserts the new one, removing the old terms and adding
  // the new; the service's page says updates cost about twice as much as
  // creates when few index terms change. Here it is REPLACE_FACTOR x the size
  // charge of the resulting document plus each side's terms against the
  // reference, i.e. exactly twice the create of the same document when the
  // term count does not change (1 KB, 10 terms: 9.90 RU).
  // A delete removes the document and its terms: charged as its create.
  REPLACE_FACTOR: 2,
  // Rejected requests (404, 409, 412, 400 on a document) still cost the lookup.
  REJECTED: 1.0,
  // Queries: a fixed cost for compiling and starting the query, then per
  // document the engine had to load and evaluate, then per document and KB it
  // returned. A query returning one small document costs ~2.6 RU and one
  // returning 20 small documents of its partition ~4.4 RU, close to what the
  // service charges; a scan of 100k documents costs ~1,000 RU.
  QUERY_BASE: 2.5,
  QUERY_PER_SCANNED_DOC: 0.01,
  QUERY_PER_RETURNED_DOC: 0.05,
  QUERY_PER_RETURNED_KB: 0.1,
  // Control-plane reads (account, database, container, partition key ranges).
  METADATA: 1.0,
  // The query plan is computed by the gateway and not billed by the service.
  QUERY_PLAN: 0,
});

function round2(x) {
  return Math.round(x * 100) / 100;
}

function extraKb(bytes) {
  return Math.max(0, bytes / KB - 1);
}

// Size part of a write at the reference term count, unrounded: the published
// curve, linear in bytes between its points, floored below 1 KB, extrapolated
// past 2 MB with the last segment's slope.
function writeSize(bytes) {
  const kb = Math.max(0, bytes) / KB;
  const first = WRITE_CURVE[0];
  if (kb <= first[0]) return first[1];
  for (let i = 1; i < WRITE_CURVE.length; i += 1) {
    const [x1, y1] = WRITE_CURVE[i];
    if (kb <= x1 || i === WRITE_CURVE.length - 1) {
      const [x0, y0] = WRITE_CURVE[i - 1];
      return y0 + ((y1 - y0) * (kb - x0)) / (x1 - x0);
    }
  }
  return first[1]; // not reached
}

// Index-term part of a write: each term above or below the reference.
function termDelta(terms) {
  return RU.INDEX_TERM * (terms - RU.REFERENCE_TERMS);
}

function pointRead(bytes) {
  return round2(RU.READ_BASE + RU.READ_PER_EXTRA_KB * extraKb(bytes));
}

function create(bytes, terms = RU.DEFAULT_TERMS) {
  return round2(writeSize(bytes) + termDelta(terms));
}

// `bytes` is the resulting document (a patch's too): replace, upsert over an
// existing item and patch.
function replace(bytes, oldTerms = RU.DEFAULT_TERMS, newTerms = oldTerms) {
  return round2(RU.REPLACE_FACTOR * writeSize(bytes) + termDelta(oldTerms) + termDelta(newTerms));
}

function remove(bytes, terms = RU.DEFAULT_TERMS) {
  return round2(writeSize(bytes) + termDelta(terms));
}

// `scanned` is how many documents the engine evaluated for this page, `returned`
// how many it sent back and `returnedBytes` their serialized size.
function query({ scanned = 0, returned = 0, returnedBytes = 0 } = {}) {
  return round2(
    RU.QUERY_BASE +
      RU.QUERY_PER_SCANNED_DOC * scanned +
      RU.QUERY_PER_RETURNED_DOC * returned +
      RU.QUERY_PER_RETURNED_KB * (returnedBytes / KB),
  );
}

function rejected() {
  return RU.REJECTED;
}

function metadata() {
  return RU.METADATA;
}

function queryPlan() {
  return RU.QUERY_PLAN;
}

// Serialized size decides the charge, as on the service (which bills on the
// stored representation including system properties).
function sizeOf(doc) {
  if (doc === undefined || doc === null) return 0;
  return Buffer.byteLength(JSON.stringify(doc));
}

module.exports = {
  RU,
  WRITE_CURVE,
  writeSize,
  round2,
  pointRead,
  create,
  replace,
  remove,
  query,
  rejected,
  metadata,
  queryPlan,
  sizeOf,
};
