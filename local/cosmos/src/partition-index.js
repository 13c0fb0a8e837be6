'use strict';

// A secondary index of a container's documents by logical partition.
//
// The package keeps a container's documents in one Map (`documents._data`,
// rid -> Document) and every query scans all of it; its SQL executor also
// builds its working set with an O(n^2) spread, so one query over 100k
// documents took 80 s. Cosmos itself serves a single-partition query from that
// partition only. We swap the package's Map for this subclass: the package's
// own create/replace/delete keep calling set()/delete() on it, and it keeps a
// per-partition Map (id -> Document) in step, so point operations and
// single-partition queries touch only their partition.
//
// It also remembers when each document was last written (in ms), which the TTL
// logic needs at a finer grain than the package's `_ts` seconds.

const NONE_KEY = '\u0000none';

// Partition key values are compared as JSON, so 1 and "1" are different
// partitions, as in Cosmos. A missing value (or PartitionKey.NONE, sent as
// [{}]) is its own partition.
function partitionKeyString(value) {
  if (value === undefined) return NONE_KEY;
  if (value !== null && typeof value === 'object') {
    return Object.keys(value).length === 0 && !Array.isArray(value) ? NONE_KEY : JSON.stringify(value);
  }
  return JSON.stringify(value);
}

function valueAtPath(doc, segments) {
  let v = doc;
  for (const s of segments) {
    if (v === null || typeof v !== 'object') return undefined;
    v = v[s];
  }
  return v;
}

class PartitionIndex extends Map {
  constructor(pkSegments, entries) {
    super();
    this.pkSegments = pkSegments;
    this.partitions = new Map(); // pk string -> Map(id -> Document)
    this.writtenAt = new Map(); // rid -> ms
    if (entries) for (const [rid, item] of entries) this.set(rid, item);
  }

  partitionKeyOf(data) {
    return partitionKeyString(valueAtPath(data, this.pkSegments));
  }

  set(rid, item) {
    const previous = super.get(rid);
    if (previous) this._unlink(previous.read());
    super.set(rid, item);
    const data = item.read();
    if (data) {
      const pk = this.partitionKeyOf(data);
      let bucket = this.partitions.get(pk);
      if (!bucket) {
        bucket = new Map();
        this.partitions.set(pk, bucket);
      }
      bucket.set(data.id, item);
    }
    this.writtenAt.set(rid, Date.now());
    return this;
  }

  delete(rid) {
    const previous = super.get(rid);
    if (previous) this._unlink(previous.read());
    this.writtenAt.delete(rid);
    return super.delete(rid);
  }

  clear() {
    this.partitions.clear();
    this.writtenAt.clear();
    super.clear();
  }

  _unlink(data) {
    if (!data) return;
    const pk = this.partitionKeyOf(data);
    const bucket = this.partitions.get(pk);
    if (!bucket) return;
    bucket.delete(data.id);
    if (bucket.size === 0) this.partitions.delete(pk);
  }

  // Document wrapper for (partition key string, id), or undefined.
  find(pkString, id) {
    const bucket = this.partitions.get(pkString);
    return bucket ? bucket.get(id) : undefined;
  }

  partition(pkString) {
    return this.partitions.get(pkString);
  }
}

// The container's partition key path as segments ("/pk" -> ["pk"]). The
// package only understands the first path of a partition key definition.
function partitionKeySegments(collectionData) {
  const paths = (collectionData && collectionData.partitionKey && collectionData.partitionKey.paths) || [];
  const first = paths[0];
  if (!first || first === '/_partitionKey') return ['id'];
  return first.slice(1).split('/');
}

// Installs the index on a container the first time we touch it (and again if
// the container was deleted and recreated, which makes a new Documents object).
function indexOf(collection) {
  const docs = collection.documents;
  if (!(docs._data instanceof PartitionIndex)) {
    docs._data = new PartitionIndex(partitionKeySegments(collection.read()), docs._data);
  }
  return docs._data;
}

module.exports = { PartitionIndex, indexOf, partitionKeyString, partitionKeySegments, valueAtPath, NONE_KEY };
