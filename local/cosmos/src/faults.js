'use strict';

// Fault rules for the Cosmos listener, managed through the control endpoint.
//
// A rule matches requests (all given matchers must hold) and acts on them:
// wait `delayMs`, then either answer `status`/`subStatus` (+ retry-after) or
// drop the connection, or — with neither — let the request through, which is
// how "added latency" is expressed. A rule can be limited to its first `count`
// matches and/or to `durationMs` after it was added. Delay-only rules all
// apply (their delays add up); the first matching rule with a status or a drop
// decides the answer. Rules are evaluated in the order they were added.

const KINDS = Object.freeze(['read', 'write', 'batch', 'query', 'queryplan', 'readfeed', 'metadata']);

const DEFAULT_SUB_STATUS = Object.freeze({ 429: 3200 });
const DEFAULT_RETRY_AFTER_MS = Object.freeze({ 429: 100, 449: 100 });

class FaultSpecError extends Error {}

function optionalNonNegativeInt(spec, name) {
  const v = spec[name];
  if (v === undefined || v === null) return null;
  if (!Number.isInteger(v) || v < 0) throw new FaultSpecError(`${name} must be a non-negative integer, got ${JSON.stringify(v)}`);
  return v;
}

function optionalPositiveInt(spec, name) {
  const v = optionalNonNegativeInt(spec, name);
  if (v === 0) throw new FaultSpecError(`${name} must be positive`);
  return v;
}

function compileRegex(source, name) {
  if (source === undefined || source === null) return null;
  if (typeof source !== 'string') throw new FaultSpecError(`${name} must be a string (a regular expression)`);
  try {
    return new RegExp(source);
  } catch (e) {
    throw new FaultSpecError(`${name} is not a valid regular expression: ${e.message}`);
  }
}

function normalizeKinds(kind) {
  if (kind === undefined || kind === null) return null;
  const list = Array.isArray(kind) ? kind : [kind];
  if (list.length === 0) return null;
  return list.map((k) => {
    const lower = String(k).toLowerCase();
    if (!KINDS.includes(lower)) throw new FaultSpecError(`kind must be one of ${KINDS.join(', ')}, got ${JSON.stringify(k)}`);
    return lower;
  });
}

const KNOWN_FIELDS = new Set([
  'id', 'method', 'path', 'pathPrefix', 'kind', 'header', 'headerValue',
  'status', 'subStatus', 'retryAfterMs', 'delayMs', 'drop', 'count', 'durationMs', 'message',
]);

// Validates a JSON rule spec and returns the internal rule (spec kept for listing).
function compileRule(spec, { id, now }) {
  if (!spec || typeof spec !== 'object' || Array.isArray(spec)) throw new FaultSpecError('a rule must be a JSON object');
  for (const field of Object.keys(spec)) {
    if (!KNOWN_FIELDS.has(field)) throw new FaultSpecError(`unknown field ${JSON.stringify(field)}; known: ${[...KNOWN_FIELDS].join(', ')}`);
  }
  const status = optionalNonNegativeInt(spec, 'status');
  if (status !== null && (status < 400 || status > 599)) throw new FaultSpecError('status must be between 400 and 599');
  const drop = spec.drop === undefined ? false : spec.drop;
  if (typeof drop !== 'boolean') throw new FaultSpecError('drop must be true or false');
  if (drop && status !== null) throw new FaultSpecError('a rule either answers a status or drops the connection, not both');
  const delayMs = optionalNonNegativeInt(spec, 'delayMs');
  if (status === null && !drop && !delayMs) throw new FaultSpecError('a rule needs a status, drop: true or a delayMs > 0');
  const subStatus = optionalNonNegativeInt(spec, 'subStatus');
  const retryAfterMs = optionalNonNegativeInt(spec, 'retryAfterMs');
  if (spec.header !== undefined && typeof spec.header !== 'string') throw new FaultSpecError('header must be a header name');
  if (spec.headerValue !== undefined && spec.header === undefined) throw new FaultSpecError('headerValue needs header');
  if (spec.method !== undefined && typeof spec.method !== 'string') throw new FaultSpecError('method must be a string');
  if (spec.pathPrefix !== undefined && typeof spec.pathPrefix !== 'string') throw new FaultSpecError('pathPrefix must be a string');
  if (spec.message !== undefined && typeof spec.message !== 'string') throw new FaultSpecError('message must be a string');
  const count = optionalPositiveInt(spec, 'count');
  const durationMs = optionalPositiveInt(spec, 'durationMs');
  const rule = {
    id: spec.id !== undefined ? String(spec.id) : id,
    method: spec.method ? spec.method.toUpperCase() : null,
    path: compileRegex(spec.path, 'path'),
    pathPrefix: spec.pathPrefix || null,
    kinds: normalizeKinds(spec.kind),
    header: spec.header ? spec.header.toLowerCase() : null,
    headerValue: compileRegex(spec.headerValue, 'headerValue'),
    status,
    subStatus: status === null ? null : subStatus !== null ? subStatus : DEFAULT_SUB_STATUS[status] || 0,
    retryAfterMs: status === null ? null : retryAfterMs !== null ? retryAfterMs : DEFAULT_RETRY_AFTER_MS[status] || null,
    delayMs: delayMs || 0,
    drop,
    message: spec.message || null,
    count,
    expiresAt: durationMs ? now + durationMs : null,
    createdAt: now,
    hits: 0,
    spec,
  };
  return rule;
}

function matches(rule, req) {
  if (rule.method && rule.method !== req.method) return false;
  if (rule.pathPrefix && !req.path.startsWith(rule.pathPrefix)) return false;
  if (rule.path && !rule.path.test(req.path)) return false;
  if (rule.kinds && !rule.kinds.includes(req.kind)) return false;
  if (rule.header) {
    const value = req.headers[rule.header];
    if (value === undefined) return false;
    if (rule.headerValue && !rule.headerValue.test(Array.isArray(value) ? value.join(',') : String(value))) return false;
  }
  return true;
}

class FaultRules {
  constructor({ now = Date.now } = {}) {
    this._now = now;
    this._rules = [];
    this._nextId = 1;
  }

  add(spec) {
    const rule = compileRule(spec, { id: `r${this._nextId++}`, now: this._now() });
    const existing = this._rules.findIndex((r) => r.id === rule.id);
    if (existing >= 0) this._rules[existing] = rule;
    else this._rules.push(rule);
    return this.describe(rule);
  }

  remove(id) {
    const before = this._rules.length;
    this._rules = this._rules.filter((r) => r.id !== id);
    return this._rules.length !== before;
  }

  clear() {
    const n = this._rules.length;
    this._rules = [];
    return n;
  }

  _active(rule, now) {
    if (rule.count !== null && rule.hits >= rule.count) return false;
    if (rule.expiresAt !== null && now >= rule.expiresAt) return false;
    return true;
  }

  // req: { method, path, kind, headers } with lower-case header names.
  // -> { delayMs, fault: null | { status, subStatus, retryAfterMs, drop, message, ruleId } }
  match(req) {
    const now = this._now();
    let delayMs = 0;
    let fault = null;
    for (const rule of this._rules) {
      if (!this._active(rule, now) || !matches(rule, req)) continue;
      const terminal = rule.status !== null || rule.drop;
      if (terminal && fault) continue;
      rule.hits += 1;
      delayMs += rule.delayMs;
      if (terminal) {
        fault = {
          ruleId: rule.id,
          status: rule.status,
          subStatus: rule.subStatus,
          retryAfterMs: rule.retryAfterMs,
          drop: rule.drop,
          message: rule.message,
        };
      }
    }
    return { delayMs, fault };
  }

  describe(rule) {
    const now = this._now();
    return {
      ...rule.spec,
      id: rule.id,
      subStatus: rule.subStatus === null ? undefined : rule.subStatus,
      retryAfterMs: rule.retryAfterMs === null ? undefined : rule.retryAfterMs,
      hits: rule.hits,
      remaining: rule.count === null ? null : Math.max(0, rule.count - rule.hits),
      expiresInMs: rule.expiresAt === null ? null : Math.max(0, rule.expiresAt - now),
      active: this._active(rule, now),
    };
  }

  list() {
    return this._rules.map((r) => this.describe(r));
  }
}

module.exports = { FaultRules, FaultSpecError, KINDS, compileRule };
