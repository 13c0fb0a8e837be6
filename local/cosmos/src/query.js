'use strict';

// SQL query execution on top of the package's parser/executor
// (@zeit/cosmosdb-query), with our own paging.
//
// - The executor is handed only the documents of the addressed partition (see
//   partition-index.js) and its generated code is made linear (see linearize).
// - Paging: the executor's own continuation compares base64 `_rid` strings,
//   which do not sort in document order, so pages could skip or repeat
//   documents. We run the query once, keep the result as a cursor for a while,
//   and hand out an opaque continuation `tally:<cursor>:<offset>`. A cursor
//   that expired is re-run and skipped to the offset.
// - DISTINCT and OFFSET/LIMIT, which the parser rejects, are stripped from the
//   text and applied to the result here.
// - Over a large input (a cross-partition query, a big partition) a query
//   whose result is the concatenation of its results over any split of the
//   input runs in slices that give the event loop back (see slices.js).

const crypto = require('crypto');
const { Slicer, sortSliced } = require('./slices');

// The executor module the package's own copy of the query engine uses.
const helpers = require(require.resolve('@zeit/cosmosdb-query/lib/helpers', {
  paths: [require.resolve('@vercel/cosmosdb-server')],
}));

const DEFAULT_PAGE_SIZE = 100; // the service's page size when the client sends none
const MAX_PAGE_BYTES = 4 * 1024 * 1024; // the service's response size cap
const CURSOR_TTL_MS = 120 * 1000;
const MAX_CURSORS = 64;
const CONTINUATION_PREFIX = 'tally:';

class QueryError extends Error {}

// The executor builds its row set with `rows.reduce(($, c) => [...$, {c}], [])`,
// copying the accumulator for every document: O(n^2). Rewriting that one
// generated expression into an in-place push keeps the semantics (the
// accumulator is private to the reduce) and makes it O(n).
const QUADRATIC_FROM = /\? \[\.\.\.\$, \{([^{}]*)\}\] : \$, \[\]\)/g;

function linearize(query) {
  if (query.__tallyLinear) return query;
  const code = query.code;
  query._code = code.replace(QUADRATIC_FROM, '? ($.push({$1}), $) : $, [])');
  query.__tallyLinear = true;
  return query;
}

// Every result also goes through helpers.stripUndefined, whose array branch
// is `reduce((o, v) => [...o, strip(v)], [])`: O(n^2) again, 100 s for
// 100,000 rows. Same semantics (drop undefined elements, strip nested values),
// linear; installed on the helpers object the executor is handed.
function stripUndefined(obj) {
  if (Array.isArray(obj)) {
    const out = [];
    for (const v of obj) if (typeof v !== 'undefined') out.push(stripUndefined(v));
    return out;
  }
  if (obj && typeof obj === 'object') {
    const out = {};
    for (const [k, v] of Object.entries(obj)) if (typeof v !== 'undefined') out[k] = stripUndefined(v);
    return out;
  }
  return obj;
}
helpers.stripUndefined = stripUndefined;

function resolveInt(token, parameters, what) {
  if (/^\d+$/.test(token)) return Number(token);
  const p = (parameters || []).find((x) => x.name === token);
  if (!p || !Number.isInteger(p.value) || p.value < 0) throw new QueryError(`${what} ${token} must be a non-negative integer`);
  return p.value;
}

// Splits the parts the executor does not understand off the query text.
function preprocess(sql, parameters) {
  let text = sql.trim();
  let offset = null;
  let limit = null;
  let distinct = false;
  let top = null;
  const offsetLimit = /\s+OFFSET\s+(\d+|@\w+)\s+LIMIT\s+(\d+|@\w+)\s*$/i.exec(text);
  if (offsetLimit) {
    offset = resolveInt(offsetLimit[1], parameters, 'OFFSET');
    limit = resolveInt(offsetLimit[2], parameters, 'LIMIT');
    text = text.slice(0, offsetLimit.index);
  }
  const distinctRe = /^SELECT\s+(?:(TOP\s+(\d+|@\w+)\s+)DISTINCT|DISTINCT(?:\s+TOP\s+(\d+|@\w+))?)\s+/i;
  const d = distinctRe.exec(text);
  if (d) {
    distinct = true;
    const topToken = d[2] || d[3];
    if (topToken) top = resolveInt(topToken, parameters, 'TOP');
    text = `SELECT ${text.slice(d[0].length)}`;
  }
  return { text, offset, limit, distinct, top };
}

function hasSelectValue(sql) {
  return /^\s*SELECT\s+(?:DISTINCT\s+)?(?:TOP\s+\S+\s+)?(?:DISTINCT\s+)?VALUE\s/i.test(sql);
}

function dedupeInto(seen, out, r) {
  const k = JSON.stringify(r === undefined ? null : r);
  if (!seen.has(k)) {
    seen.add(k);
    out.push(r);
  }
}

function dedupe(rows) {
  const seen = new Set();
  const out = [];
  for (const r of rows) dedupeInto(seen, out, r);
  return out;
}

async function dedupeSliced(rows, slicer) {
  const seen = new Set();
  const out = [];
  for (let i = 0; i < rows.length; i += 1) {
    dedupeInto(seen, out, rows[i]);
    if (slicer.due(i + 1)) await slicer.pause();
  }
  return out;
}

function compile(documents, text) {
  try {
    return linearize(documents._getQuery(text));
  } catch (e) {
    throw new QueryError(`Syntax error in query: ${e.message}`);
  }
}

function run(query, docs, { documents, parameters, compositeIndexes }) {
  try {
    return query.exec(docs, {
      parameters: parameters || [],
      udf: documents._userDefinedFunctions() || {},
      compositeIndexes: compositeIndexes || [],
    }).result;
  } catch (e) {
    throw new QueryError(e.message);
  }
}

function finish(pre, rows) {
  let out = rows;
  if (pre.distinct) out = dedupe(out);
  if (pre.top !== null) out = out.slice(0, pre.top);
  if (pre.offset !== null) out = out.slice(pre.offset, pre.offset + pre.limit);
  return out;
}

// Runs the whole query over `docs`; returns the full result array.
function execute(spec) {
  const pre = preprocess(spec.sql, spec.parameters);
  return finish(pre, run(compile(spec.documents, pre.text), spec.docs, spec));
}

// Inputs up to this size run in one go (a few ms); larger ones in slices.
const SLICED_ABOVE_DOCS = 2000;
const DOCS_PER_SLICE = 500;

// How a query can be cut: { top } (null = no TOP) when its result over the
// whole input is the concatenation of its results over consecutive slices of
// the input in `_rid` order (the order the executor sorts by when there is no
// ORDER BY), cut to TOP; null when it is not: ORDER BY sorts across slices and
// aggregates (`$a.` in the generated code) fold them.
function sliceability(query, parameters) {
  const body = query.ast.body;
  if (!body || body.orderBy || query.code.includes('$a.')) return null;
  if (!body.top) return { top: null };
  const v = body.top.value;
  if (v.type === 'number_constant') return { top: v.value };
  const p = (parameters || []).find((x) => x.name === v.name);
  return p && Number.isInteger(p.value) ? { top: p.value } : null;
}

const byRid = (a, b) => (a._rid < b._rid ? -1 : a._rid > b._rid ? 1 : 0);

// As execute, but gives the event loop back every few ms over a large input.
// ORDER BY and aggregate queries still run in one go (see sliceability).
async function executeSliced(spec, slicer = new Slicer()) {
  if (spec.docs.length <= SLICED_ABOVE_DOCS) return execute(spec);
  const pre = preprocess(spec.sql, spec.parameters);
  const query = compile(spec.documents, pre.text);
  const cut = sliceability(query, spec.parameters);
  if (!cut) return finish(pre, run(query, spec.docs, spec));
  const sorted = await sortSliced(spec.docs, byRid, slicer);
  let rows = [];
  for (let lo = 0; lo < sorted.length && (cut.top === null || rows.length < cut.top); lo += DOCS_PER_SLICE) {
    for (const row of run(query, sorted.slice(lo, lo + DOCS_PER_SLICE), spec)) rows.push(row);
    await slicer.pauseIfDue();
  }
  if (cut.top !== null) rows = rows.slice(0, cut.top);
  if (pre.distinct) rows = await dedupeSliced(rows, slicer);
  return finish({ ...pre, distinct: false }, rows);
}

// Checks that the text parses; returns an error message or null.
function validate(documents, sql, parameters) {
  try {
    const pre = preprocess(sql, parameters);
    documents._getQuery(pre.text);
    return null;
  } catch (e) {
    return e.message;
  }
}

class CursorStore {
  constructor({ now = Date.now } = {}) {
    this._now = now;
    this._cursors = new Map();
  }

  put(rows) {
    this._evict();
    const id = crypto.randomBytes(9).toString('base64url');
    this._cursors.set(id, { rows, expiresAt: this._now() + CURSOR_TTL_MS });
    while (this._cursors.size > MAX_CURSORS) this._cursors.delete(this._cursors.keys().next().value);
    return id;
  }

  get(id) {
    const c = this._cursors.get(id);
    if (!c || c.expiresAt < this._now()) {
      this._cursors.delete(id);
      return null;
    }
    c.expiresAt = this._now() + CURSOR_TTL_MS;
    return c.rows;
  }

  drop(id) {
    this._cursors.delete(id);
  }

  _evict() {
    const now = this._now();
    for (const [id, c] of this._cursors) if (c.expiresAt < now) this._cursors.delete(id);
  }
}

function parseContinuation(token) {
  if (!token) return null;
  const t = Array.isArray(token) ? token[0] : token;
  if (!t.startsWith(CONTINUATION_PREFIX)) throw new QueryError(`invalid continuation token ${JSON.stringify(t)}`);
  const [cursor, offset] = t.slice(CONTINUATION_PREFIX.length).split(':');
  if (!cursor || !/^\d+$/.test(offset || '')) throw new QueryError(`invalid continuation token ${JSON.stringify(t)}`);
  return { cursor, offset: Number(offset) };
}

function pageSizeOf(header) {
  if (header === undefined || header === null || header === '') return DEFAULT_PAGE_SIZE;
  const n = Number(header);
  if (!Number.isInteger(n) || n === 0 || n < -1) throw new QueryError(`invalid x-ms-max-item-count ${header}`);
  return n === -1 ? Infinity : n;
}

// One page of a query. `run()` executes the whole query (and returns
// { rows, scanned }); it is called on the first page and when a cursor expired.
// -> { rows, continuation, scanned, bytes }
function page({ cursors, continuation, maxItemCount, run }) {
  const limit = pageSizeOf(maxItemCount);
  const cont = parseContinuation(continuation);
  let rows = cont ? cursors.get(cont.cursor) : null;
  let scanned = 0;
  let cursorId = cont ? cont.cursor : null;
  if (!rows) {
    const out = run();
    rows = out.rows;
    scanned = out.scanned;
    cursorId = null;
  }
  const start = cont ? cont.offset : 0;
  const pageRows = [];
  let bytes = 0;
  let i = start;
  for (; i < rows.length && pageRows.length < limit; i += 1) {
    const size = Buffer.byteLength(JSON.stringify(rows[i] === undefined ? null : rows[i]));
    if (pageRows.length > 0 && bytes + size > MAX_PAGE_BYTES) break;
    pageRows.push(rows[i]);
    bytes += size;
  }
  let next = null;
  if (i < rows.length) {
    if (!cursorId) cursorId = cursors.put(rows);
    next = `${CONTINUATION_PREFIX}${cursorId}:${i}`;
  } else if (cursorId) {
    cursors.drop(cursorId);
  }
  return { rows: pageRows, continuation: next, scanned, bytes };
}

// As page, for a `run` that returns a promise (a sliced scan).
async function pageAsync(args) {
  const cont = parseContinuation(args.continuation);
  if (cont && args.cursors.get(cont.cursor)) return page(args);
  const out = await args.run();
  return page({ ...args, run: () => out });
}

module.exports = {
  execute,
  executeSliced,
  pageAsync,
  stripUndefined,
  validate,
  page,
  preprocess,
  hasSelectValue,
  linearize,
  CursorStore,
  QueryError,
  DEFAULT_PAGE_SIZE,
};
