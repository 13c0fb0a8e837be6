'use strict';

// Document operations (read, create, upsert, replace, delete, patch) over the
// package's in-memory container, shared by single requests and by batch/bulk.
//
// Storage stays the package's: its Documents object assigns _rid/_etag/_ts/
// _self and keeps its maps; we add what the Java SDK depends on and the
// package gets wrong or lacks: 404 (not 500) for a missing id, the partition
// key checked against the header, TTL, conditional writes for every
// operation, patch conditions that keep their case, and an undo log so a
// transactional batch can roll back.
//
// Every operation returns { status, subStatus?, body?, charge, undo? }.

const RU = require('./request-units');
const { termsOf } = require('./indexing');
const ttl = require('./ttl');
const { applyPatch, parsePatchBody, PatchError } = require('./patch');
const { indexOf, partitionKeyString, partitionKeySegments, valueAtPath, NONE_KEY } = require('./partition-index');
const query = require('./query');
const { Slicer } = require('./slices');

const MAX_DOCUMENT_BYTES = 2 * 1024 * 1024;

const SUB = Object.freeze({ OWNER_RESOURCE_NOT_EXISTS: 1003 });

function error(status, code, message, extra = {}) {
  return { status, body: { code, message }, charge: RU.rejected(), ...extra };
}

const notFound = () => error(404, 'NotFound', 'Entity with the specified id does not exist in the system.');
const preconditionFailed = (why) =>
  error(412, 'PreconditionFailed', why || 'Operation cannot be performed because one of the specified precondition is not met.');
const badRequest = (message) => error(400, 'BadRequest', message);
const conflict = () => error(409, 'Conflict', 'Entity with the specified id already exists in the system.');

// A container as our operations see it.
class Container {
  constructor(collection) {
    this.collection = collection;
    this.data = collection.read();
    this.index = indexOf(collection);
    this.segments = partitionKeySegments(this.data);
    this.pkPath = `/${this.segments.join('/')}`;
  }

  get documents() {
    return this.collection.documents;
  }

  isExpired(rid, data, now = Date.now()) {
    return ttl.isExpired(this.data, data, this.index.writtenAt.get(rid), now);
  }

  // Removes a document through the package, which keeps its own maps in step.
  purge(data) {
    this.documents.delete(data.id, valueAtPath(data, this.segments));
  }

  // The current, unexpired version of (partition, id), or undefined.
  live(pkString, id) {
    const item = this.index.find(pkString, id);
    if (!item) return undefined;
    const data = item.read();
    if (this.isExpired(data._rid, data)) {
      this.purge(data);
      return undefined;
    }
    return data;
  }

  // Unexpired documents of one partition (pkString) or of all of them (null),
  // giving the event loop back between slices. Each partition is copied
  // before it is walked, so a document replaced during the scan (removed and
  // added again to its partition's Map) is seen once.
  async liveDocumentsSliced(pkString, slicer = new Slicer()) {
    const now = Date.now();
    const out = [];
    const expired = [];
    let seen = 0;
    for (const bucket of this._buckets(pkString)) {
      for (const item of Array.from(bucket.values())) {
        this._sortLive(item, now, out, expired);
        seen += 1;
        if (slicer.due(seen)) await slicer.pause();
      }
      await slicer.pauseIfDue();
    }
    for (const data of expired) this.purge(data);
    return out;
  }

  _buckets(pkString) {
    if (pkString === null) return this.index.partitions.values();
    const bucket = this.index.partition(pkString);
    return bucket ? [bucket] : [];
  }

  _sortLive(item, now, live, expired) {
    const data = item.read();
    if (this.isExpired(data._rid, data, now)) expired.push(data);
    else live.push(data);
  }

  // Puts back an exact earlier version (same _rid/_etag/_ts): batch rollback.
  restore(data) {
    this.documents._set(data);
  }
}

// Partition key as sent by the SDK: a JSON array with one value, [{}] for
// PartitionKey.NONE. Returns { given, key } where key is the index's string.
function partitionFromHeader(header) {
  if (header === undefined || header === null || header === '') return { given: false, key: NONE_KEY };
  let parsed;
  try {
    parsed = JSON.parse(Array.isArray(header) ? header[0] : header);
  } catch (e) {
    throw new RequestError(400, `invalid partition key ${JSON.stringify(header)}`);
  }
  if (Array.isArray(parsed)) {
    if (parsed.length > 1) throw new RequestError(400, 'hierarchical partition keys are not supported by this endpoint');
    return { given: true, key: partitionKeyString(parsed[0]) };
  }
  return { given: true, key: partitionKeyString(parsed) };
}

class RequestError extends Error {
  constructor(status, message, code = 'BadRequest') {
    super(message);
    this.status = status;
    this.code = code;
  }
}

function validateBody(container, pk, body) {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return 'The document must be a JSON object.';
  if (typeof body.id !== 'string' || body.id === '') return "The document needs a non-empty string 'id'.";
  if (body.id.length > 1023) return 'The id is too long (at most 1023 characters).';
  if (/[/\\?#]/.test(body.id)) return "The id cannot contain '/', '\\', '?' or '#'.";
  const ttlError = ttl.validateItemTtl(body);
  if (ttlError) return ttlError;
  if (pk.given && container.index.partitionKeyOf(body) !== pk.key) {
    return "PartitionKey extracted from document doesn't match the one specified in the header.";
  }
  return null;
}

function tooLarge(body) {
  return RU.sizeOf(body) > MAX_DOCUMENT_BYTES;
}

function etagMismatch(ifMatch, data) {
  return ifMatch && ifMatch !== '*' && ifMatch !== data._etag;
}

function read(container, pk, id, { ifNoneMatch } = {}) {
  const data = container.live(pk.key, id);
  if (!data) return notFound();
  if (ifNoneMatch && (ifNoneMatch === '*' || ifNoneMatch === data._etag)) {
    return { status: 304, charge: RU.pointRead(RU.sizeOf(data)), etag: data._etag };
  }
  return { status: 200, body: data, charge: RU.pointRead(RU.sizeOf(data)) };
}

function create(container, pk, body) {
  const invalid = validateBody(container, pk, body);
  if (invalid) return badRequest(invalid);
  if (tooLarge(body)) return error(413, 'RequestEntityTooLarge', 'Request size is too large.');
  const key = container.index.partitionKeyOf(body);
  if (container.live(key, body.id)) return conflict();
  let created;
  try {
    created = container.documents.create(body);
  } catch (e) {
    if (e.conflict) return conflict();
    throw e;
  }
  return {
    status: 201,
    body: created,
    charge: RU.create(RU.sizeOf(created), termsOf(container, created, container.pkPath)),
    undo: () => container.purge(created),
  };
}

function replaceExisting(container, existing, body) {
  let replaced;
  try {
    replaced = container.documents.replace(body, existing);
  } catch (e) {
    if (e.badRequest) return badRequest(e.message);
    if (e.conflict) return conflict();
    throw e;
  }
  return {
    status: 200,
    body: replaced,
    charge: RU.replace(RU.sizeOf(replaced), termsOf(container, existing, container.pkPath), termsOf(container, replaced, container.pkPath)),
    undo: () => container.restore(existing),
  };
}

function upsert(container, pk, body, { ifMatch } = {}) {
  const invalid = validateBody(container, pk, body);
  if (invalid) return badRequest(invalid);
  if (tooLarge(body)) return error(413, 'RequestEntityTooLarge', 'Request size is too large.');
  const existing = container.live(container.index.partitionKeyOf(body), body.id);
  if (!existing) {
    // The service answers 412 to a conditional upsert whose target is gone.
    if (ifMatch && ifMatch !== '*') return preconditionFailed();
    return create(container, pk, body);
  }
  if (etagMismatch(ifMatch, existing)) return preconditionFailed();
  return replaceExisting(container, existing, body);
}

function replace(container, pk, id, body, { ifMatch } = {}) {
  const invalid = validateBody(container, pk, body);
  if (invalid) return badRequest(invalid);
  if (id !== undefined && body.id !== id) return badRequest('The id in the URL and in the document differ.');
  if (tooLarge(body)) return error(413, 'RequestEntityTooLarge', 'Request size is too large.');
  const existing = container.live(container.index.partitionKeyOf(body), body.id);
  if (!existing) return notFound();
  if (etagMismatch(ifMatch, existing)) return preconditionFailed();
  return replaceExisting(container, existing, body);
}

function remove(container, pk, id, { ifMatch } = {}) {
  const existing = container.live(pk.key, id);
  if (!existing) return notFound();
  if (etagMismatch(ifMatch, existing)) return preconditionFailed();
  container.purge(existing);
  return {
    status: 204,
    charge: RU.remove(RU.sizeOf(existing), termsOf(container, existing, container.pkPath)),
    undo: () => container.restore(existing),
  };
}

// "from c where ..." (what the SDK sends) or "where ..." against one document. Its number literals become
// parameters, so a condition that differs only in them (the SDK's "from c where c.ver < 17", then 18, ...) is
// parsed and compiled once: the query cache keeps 100 texts, and one per write would also push out the
// read queries. VALUE 1: whether a row comes back is all that is asked, not a copy of the document.
function conditionHolds(container, data, condition) {
  const { text, parameters } = parametrizeNumbers(condition);
  const sql = /^\s*where\b/i.test(text) ? `SELECT VALUE 1 FROM c ${text}` : `SELECT VALUE 1 ${text}`;
  const rows = query.execute({ documents: container.documents, docs: [data], sql, parameters });
  return rows.length > 0;
}

// Number literals outside strings, not part of a name, an array index or a parameter, become @__n0, @__n1, ...
const NUMBER = /\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

function parametrizeNumbers(condition) {
  if (condition.includes('@')) return { text: condition, parameters: [] };
  const parameters = [];
  let text = '';
  let i = 0;
  while (i < condition.length) {
    const ch = condition[i];
    if (ch === "'" || ch === '"') {
      let j = i + 1;
      while (j < condition.length && condition[j] !== ch) j += condition[j] === '\\' ? 2 : 1;
      text += condition.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    NUMBER.lastIndex = i;
    const number = NUMBER.exec(condition);
    const before = i > 0 ? condition[i - 1] : ' ';
    if (number && !/[\w$.[]/.test(before) && !/[\w$]/.test(condition[i + number[0].length] || ' ')) {
      const name = `@__n${parameters.length}`;
      parameters.push({ name, value: Number(number[0]) });
      text += name;
      i += number[0].length;
      continue;
    }
    text += ch;
    i += 1;
  }
  return { text, parameters };
}

function patch(container, pk, id, patchBody, { ifMatch } = {}) {
  let spec;
  try {
    spec = parsePatchBody(patchBody);
  } catch (e) {
    return badRequest(e.message);
  }
  const existing = container.live(pk.key, id);
  if (!existing) return notFound();
  if (etagMismatch(ifMatch, existing)) return preconditionFailed();
  if (spec.condition) {
    let holds;
    try {
      holds = conditionHolds(container, existing, spec.condition);
    } catch (e) {
      return badRequest(`Invalid patch condition: ${e.message}`);
    }
    if (!holds) return preconditionFailed('Condition specified in the patch request is not satisfied.');
  }
  let patched;
  try {
    patched = applyPatch(existing, spec.operations, { protectedPaths: [container.pkPath] });
  } catch (e) {
    if (e instanceof PatchError) return badRequest(e.message);
    throw e;
  }
  const ttlError = ttl.validateItemTtl(patched);
  if (ttlError) return badRequest(ttlError);
  if (tooLarge(patched)) return error(413, 'RequestEntityTooLarge', 'Request size is too large.');
  return replaceExisting(container, existing, patched);
}

module.exports = {
  Container,
  RequestError,
  partitionFromHeader,
  read,
  create,
  upsert,
  replace,
  remove,
  patch,
  notFound,
  badRequest,
  error,
  SUB,
};
