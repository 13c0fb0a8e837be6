'use strict';

// How many index terms a document adds under a container's indexing policy: the
// number the write charge grows with (request-units.js). The service indexes
// every leaf value whose path the policy includes; `includedPaths` and
// `excludedPaths` hold patterns like "/grade/?" (that scalar), "/a/*" (all below
// /a), "/*" (everything) and "/tags/[]/?" (each array element), and where an
// included and an excluded pattern both match, the more precise one (the longer
// prefix) wins. `indexingMode: "none"` indexes nothing. System properties
// (_rid, _etag, _ts, ...), the id and the partition key live in the primary
// index and are not counted. Spatial and composite indexes are ignored.

const SYSTEM = new Set(['_rid', '_self', '_etag', '_attachments', '_ts', '_lsn', 'id']);

function compile(pattern) {
  const p = String(pattern).trim();
  if (p === '/*') return { prefix: [], subtree: true, precision: 0 };
  const parts = p.replace(/^\//, '').split('/').map(unquote);
  const last = parts.pop();
  if (last === '*') return { prefix: parts, subtree: true, precision: parts.length };
  if (last === '?') return { prefix: parts, subtree: false, precision: parts.length + 0.5 };
  // A bare path ("/a") is taken as its subtree, as the service's older policies did.
  parts.push(last);
  return { prefix: parts, subtree: true, precision: parts.length };
}

function unquote(segment) {
  return segment.replace(/^"(.*)"$/, '$1');
}

function matches(rule, path) {
  if (rule.subtree ? path.length < rule.prefix.length : path.length !== rule.prefix.length) return false;
  return rule.prefix.every((seg, i) => seg === path[i]);
}

// A container's policy compiled once: documents are charged on every write. A container without a policy shares
// one empty policy, so it is compiled once too.
const compiled = new WeakMap();
const NO_POLICY = Object.freeze({});

function policyOf(container) {
  const policy = (container && container.data && container.data.indexingPolicy) || NO_POLICY;
  if (String(policy.indexingMode || 'consistent').toLowerCase() === 'none') return { none: true };
  let c = compiled.get(policy);
  if (!c) {
    const included = (policy.includedPaths || [{ path: '/*' }]).map((p) => compile(p.path));
    const excluded = (policy.excludedPaths || []).filter((p) => !/_etag/.test(p.path)).map((p) => compile(p.path));
    c = { included, excluded, rules: included.map((r) => ({ ...r, inc: true })).concat(excluded.map((r) => ({ ...r, inc: false }))) };
    compiled.set(policy, c);
  }
  return c;
}

function indexed(policy, path) {
  let best = null;
  for (const r of policy.included) if (matches(r, path) && (!best || r.precision > best.precision)) best = { precision: r.precision, inc: true };
  for (const r of policy.excluded) if (matches(r, path) && (!best || r.precision >= best.precision)) best = { precision: r.precision, inc: false };
  return Boolean(best && best.inc);
}

// Below an object or array at `path` that no pattern reaches deeper into, every leaf is decided by the same
// subtree patterns (a "?" pattern at `path` itself names a scalar there, not what lies below): true or false
// for all of them. Null while some pattern still reaches below `path`.
function decidedBelow(policy, path) {
  let best = null;
  for (const r of policy.rules) {
    if (r.prefix.length > path.length) {
      if (r.prefix.every((seg, i) => i >= path.length || seg === path[i])) return null;
    } else if (r.subtree && r.prefix.every((seg, i) => seg === path[i])
        && (!best || r.precision > best.precision || (!r.inc && r.precision === best.precision))) {
      best = r;
    }
  }
  return Boolean(best && best.inc);
}

function countLeaves(value) {
  if (value === null || typeof value !== 'object') return 1;
  let n = 0;
  if (Array.isArray(value)) for (const v of value) n += countLeaves(v);
  else for (const k in value) if (Object.prototype.hasOwnProperty.call(value, k)) n += countLeaves(value[k]);
  return n;
}

// Indexed leaves under `value` at `path` (array elements as "[]"); `path` is one array, pushed and popped.
function countIndexed(policy, value, path, skipTopLevel) {
  if (value === null || typeof value !== 'object') {
    if (path.length === 1 && skipTopLevel(path[0])) return 0;
    return indexed(policy, path) ? 1 : 0;
  }
  if (path.length > 0) {
    const decided = decidedBelow(policy, path);
    if (decided === false) return 0;
    if (decided === true) return countLeaves(value);
  }
  let n = 0;
  if (Array.isArray(value)) {
    path.push('[]');
    for (const v of value) n += countIndexed(policy, v, path, skipTopLevel);
    path.pop();
  } else {
    for (const k in value) {
      if (!Object.prototype.hasOwnProperty.call(value, k)) continue;
      path.push(k);
      n += countIndexed(policy, value[k], path, skipTopLevel);
      path.pop();
    }
  }
  return n;
}

function termsOf(container, doc, pkPath) {
  const policy = policyOf(container);
  if (policy.none || !doc) return 0;
  const pkKey = pkPath ? pkPath.replace(/^\//, '') : null;
  return countIndexed(policy, doc, [], (key) => SYSTEM.has(key) || key === pkKey);
}

module.exports = { termsOf, compile };
