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

function policyOf(container) {
  const policy = (container && container.data && container.data.indexingPolicy) || {};
  if (String(policy.indexingMode || 'consistent').toLowerCase() === 'none') return { none: true };
  const included = (policy.includedPaths || [{ path: '/*' }]).map((p) => compile(p.path));
  const excluded = (policy.excludedPaths || []).filter((p) => !/_etag/.test(p.path)).map((p) => compile(p.path));
  return { included, excluded };
}

function indexed(policy, path) {
  let best = null;
  for (const r of policy.included) if (matches(r, path) && (!best || r.precision > best.precision)) best = { precision: r.precision, inc: true };
  for (const r of policy.excluded) if (matches(r, path) && (!best || r.precision >= best.precision)) best = { precision: r.precision, inc: false };
  return Boolean(best && best.inc);
}

// Leaf paths of a document, array elements as "[]".
function leaves(value, path, out) {
  if (value !== null && typeof value === 'object') {
    if (Array.isArray(value)) value.forEach((v) => leaves(v, path.concat('[]'), out));
    else for (const [k, v] of Object.entries(value)) leaves(v, path.concat(k), out);
  } else {
    out.push(path);
  }
  return out;
}

function termsOf(container, doc, pkPath) {
  const policy = policyOf(container);
  if (policy.none || !doc) return 0;
  const pkKey = pkPath ? pkPath.replace(/^\//, '') : null;
  let n = 0;
  for (const path of leaves(doc, [], [])) {
    if (path.length === 1 && (SYSTEM.has(path[0]) || path[0] === pkKey)) continue;
    if (indexed(policy, path)) n++;
  }
  return n;
}

module.exports = { termsOf, compile };
