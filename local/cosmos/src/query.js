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

const crypto = require('crypto');

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

function dedupe(rows) {
  const seen = new Set();
  const out = [];
  for (const r of rows) {
    const k = JSON.stringify(r === undefined ? null : r);
    if (!seen.has(k)) {
      seen.add(k);
      out.push(r);
    }
  }
  return out;
}

// Runs the whole query over `docs`; returns the full result array.
function execute({ documents, docs, sql, parameters, compositeIndexes }) {
  const pre = preprocess(sql, parameters);
  let query;
  try {
    query = linearize(documents._getQuery(pre.text));
  } catch (e) {
    throw new QueryError(`Syntax error in query: ${e.message}`);
  }
  let rows;
  try {
    const out = query.exec(docs, {
      parameters: parameters || [],
      udf: documents._userDefinedFunctions() || {},
      compositeIndexes: compositeIndexes || [],
    });
    rows = out.result;
  } catch (e) {
    throw new QueryError(e.message);
  }
  if (pre.distinct) rows = dedupe(rows);
  if (pre.top !== null) rows = rows.slice(0, pre.top);
  if (pre.offset !== null) rows = rows.slice(pre.offset, pre.offset + pre.limit);
  return rows;
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

module.exports = {
  execute,
  validate,
  page,
  preprocess,
  hasSelectValue,
  linearize,
  CursorStore,
  QueryError,
  DEFAULT_PAGE_SIZE,
};
