'use strict';

// Partial document update (Cosmos "Patch"), as the SDK encodes it:
// { "operations": [ { "op": "set"|"add"|"replace"|"remove"|"incr"|"move",
//                     "path": "/a/b", "value": ..., "from": "/x" } ],
//   "condition": "from c where c.ver < 7" }
// Used both for PATCH requests and for Patch operations inside batch/bulk
// requests (which the package does not support). The semantics follow the
// service's documentation: paths are JSON pointers; no operation creates
// missing intermediate objects; replace/remove need an existing target; incr
// creates a missing field; system properties, `id` and the partition key
// cannot be patched.

const MAX_OPERATIONS = 10;

class PatchError extends Error {}

function parsePointer(pointer, what) {
  if (typeof pointer !== 'string' || !pointer.startsWith('/') || pointer === '/') {
    throw new PatchError(`${what} must be a JSON pointer such as "/field", got ${JSON.stringify(pointer)}`);
  }
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function isContainer(v) {
  return v !== null && typeof v === 'object';
}

// The object/array holding the last segment, copied on the way down unless this patch copied it already
// (`owned`): the patched document shares every part no operation touches with the original, which stays
// as it was. Throws if any part is missing.
function parentOf(doc, segments, pointer, owned) {
  let node = doc;
  for (let i = 0; i < segments.length - 1; i += 1) {
    const s = segments[i];
    let key;
    if (Array.isArray(node)) key = arrayIndex(node, s, pointer, false);
    else if (isContainer(node) && Object.prototype.hasOwnProperty.call(node, s)) key = s;
    else throw new PatchError(`path ${pointer}: parent "${segments.slice(0, i + 1).join('/')}" does not exist`);
    let child = node[key];
    if (isContainer(child) && !owned.has(child)) {
      child = Array.isArray(child) ? child.slice() : { ...child };
      owned.add(child);
      node[key] = child;
    }
    node = child;
  }
  if (!isContainer(node)) throw new PatchError(`path ${pointer}: parent is not an object or array`);
  return node;
}

function arrayIndex(array, segment, pointer, allowEnd) {
  if (!/^\d+$/.test(segment)) throw new PatchError(`path ${pointer}: "${segment}" is not an array index`);
  const i = Number(segment);
  if (i > array.length || (!allowEnd && i === array.length)) {
    throw new PatchError(`path ${pointer}: index ${i} is out of array bounds (length ${array.length})`);
  }
  return i;
}

function has(parent, key, pointer) {
  if (Array.isArray(parent)) return /^\d+$/.test(key) && Number(key) < parent.length;
  return Object.prototype.hasOwnProperty.call(parent, key);
}

function applyOne(doc, op, owned) {
  if (!op || typeof op !== 'object') throw new PatchError('each operation must be an object');
  const segments = parsePointer(op.path, 'path');
  const pointer = op.path;
  const key = segments[segments.length - 1];
  switch (op.op) {
    case 'add': {
      const parent = parentOf(doc, segments, pointer, owned);
      if (Array.isArray(parent)) {
        if (key === '-') parent.push(op.value);
        else parent.splice(arrayIndex(parent, key, pointer, true), 0, op.value);
      } else parent[key] = op.value;
      return;
    }
    case 'set': {
      const parent = parentOf(doc, segments, pointer, owned);
      if (Array.isArray(parent)) {
        if (key === '-') parent.push(op.value);
        else parent[arrayIndex(parent, key, pointer, true)] = op.value;
      } else parent[key] = op.value;
      return;
    }
    case 'replace': {
      const parent = parentOf(doc, segments, pointer, owned);
      if (!has(parent, key)) throw new PatchError(`path ${pointer}: replace target does not exist`);
      parent[Array.isArray(parent) ? Number(key) : key] = op.value;
      return;
    }
    case 'remove': {
      const parent = parentOf(doc, segments, pointer, owned);
      if (!has(parent, key)) throw new PatchError(`path ${pointer}: remove target does not exist`);
      if (Array.isArray(parent)) parent.splice(Number(key), 1);
      else delete parent[key];
      return;
    }
    case 'incr': {
      if (typeof op.value !== 'number' || !Number.isFinite(op.value)) {
        throw new PatchError(`path ${pointer}: increment value must be a number`);
      }
      const parent = parentOf(doc, segments, pointer, owned);
      const k = Array.isArray(parent) ? arrayIndex(parent, key, pointer, false) : key;
      const current = parent[k];
      if (current === undefined) parent[k] = op.value;
      else if (typeof current === 'number') parent[k] = current + op.value;
      else throw new PatchError(`path ${pointer}: cannot increment a non-numeric value`);
      return;
    }
    case 'move': {
      const fromSegments = parsePointer(op.from, 'from');
      if (op.from === pointer) throw new PatchError('move: from and path are the same');
      if (pointer.startsWith(`${op.from}/`)) throw new PatchError('move: cannot move a value into itself');
      const fromParent = parentOf(doc, fromSegments, op.from, owned);
      const fromKey = fromSegments[fromSegments.length - 1];
      if (!has(fromParent, fromKey)) throw new PatchError(`move: from ${op.from} does not exist`);
      let value;
      if (Array.isArray(fromParent)) value = fromParent.splice(Number(fromKey), 1)[0];
      else {
        value = fromParent[fromKey];
        delete fromParent[fromKey];
      }
      applyOne(doc, { op: 'set', path: pointer, value }, owned);
      return;
    }
    default:
      throw new PatchError(`unsupported patch operation ${JSON.stringify(op.op)}`);
  }
}

// Returns a new document with `operations` applied; `original` is not touched.
// `protectedPaths` are top-level-or-nested pointers (e.g. "/pk") that must not change.
function applyPatch(original, operations, { protectedPaths = [] } = {}) {
  if (!Array.isArray(operations) || operations.length === 0) {
    throw new PatchError('a patch needs at least one operation');
  }
  if (operations.length > MAX_OPERATIONS) {
    throw new PatchError(`a patch can have at most ${MAX_OPERATIONS} operations, got ${operations.length}`);
  }
  for (const op of operations) {
    for (const p of [op && op.path, op && op.from]) {
      if (typeof p !== 'string') continue;
      if (p.startsWith('/_')) throw new PatchError(`system property ${p} cannot be patched`);
      if (p === '/id' || p.startsWith('/id/')) throw new PatchError('the id cannot be patched');
      for (const pp of protectedPaths) {
        if (p === pp || p.startsWith(`${pp}/`) || pp.startsWith(`${p}/`)) {
          throw new PatchError(`the partition key ${pp} cannot be patched`);
        }
      }
    }
  }
  const doc = { ...original };
  const owned = new Set([doc]);
  operations.forEach((op, i) => {
    try {
      applyOne(doc, op, owned);
    } catch (e) {
      if (e instanceof PatchError) throw new PatchError(`operation ${i} (${op && op.op}): ${e.message}`);
      throw e;
    }
  });
  return doc;
}

// The SDK sends {operations, condition}; older clients send a bare array.
function parsePatchBody(body) {
  if (Array.isArray(body)) return { operations: body, condition: null };
  if (body && typeof body === 'object' && Array.isArray(body.operations)) {
    const condition = typeof body.condition === 'string' && body.condition.trim() ? body.condition.trim() : null;
    return { operations: body.operations, condition };
  }
  throw new PatchError('invalid patch body: expected {"operations": [...]}');
}

module.exports = { applyPatch, parsePatchBody, PatchError, MAX_OPERATIONS };
