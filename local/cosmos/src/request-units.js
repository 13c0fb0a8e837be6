'use strict';

// Request-unit model. The real service prices an operation by the work it does
// (bytes read or written, index terms touched, documents a query loads); these
// constants reproduce its published ballpark figures for small documents with
// the default "index everything" policy, so budgets and 429 behaviour seen
// locally are in the same range as in Azure; writes follow the number of index
// terms, so a narrower indexing policy is cheaper here as it is there.
// README.md explains the model.

const KB = 1024;

const RU = Object.freeze({
  // Point read of a document up to 1 KB is the unit the service defines as 1 RU;
  // every further KB adds ~0.1 RU (a 100 KB read costs ~10 RU).
  READ_BASE: 1.0,
  READ_PER_EXTRA_KB: 0.1,
  // Writes pay for storing the document and for every index term they add or
  // remove (indexing.js counts them under the container's indexing policy), as
  // the service documents: narrowing the policy makes writes cheaper. Creating a
  // ~1 KB document of 10 indexed properties costs ~5.7 RU (4.71 + 10 x 0.1); the
  // split between the base and the terms is this model's, not a published one.
  CREATE_BASE: 4.71,
  INDEX_TERM: 0.1,
  // Replacing (or upserting over an existing document) removes the old terms and
  // adds the new ones, which is why the service charges about twice a create
  // under the default "index everything" policy (8.29 + 20 x 0.1 = 10.29).
  REPLACE_BASE: 8.29,
  DELETE_BASE: 4.71,
  // Index terms of a document whose terms were not counted: a ~1 KB document
  // with every property indexed.
  DEFAULT_TERMS: 10,
  // Writes grow roughly linearly with size: ~0.5 RU per KB above the first.
  WRITE_PER_EXTRA_KB: 0.5,
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

function pointRead(bytes) {
  return round2(RU.READ_BASE + RU.READ_PER_EXTRA_KB * extraKb(bytes));
}

function create(bytes, terms = RU.DEFAULT_TERMS) {
  return round2(RU.CREATE_BASE + RU.INDEX_TERM * terms + RU.WRITE_PER_EXTRA_KB * extraKb(bytes));
}

function replace(bytes, oldTerms = RU.DEFAULT_TERMS, newTerms = oldTerms) {
  return round2(RU.REPLACE_BASE + RU.INDEX_TERM * (oldTerms + newTerms) + RU.WRITE_PER_EXTRA_KB * extraKb(bytes));
}

function remove(bytes, terms = RU.DEFAULT_TERMS) {
  return round2(RU.DELETE_BASE + RU.INDEX_TERM * terms + RU.WRITE_PER_EXTRA_KB * extraKb(bytes));
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
