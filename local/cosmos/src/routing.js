'use strict';

// Which handler a request goes to: document paths are ours (and split by
// operation kind, which fault rules, stats and the throughput budget key on);
// every other path is metadata, answered by the package's route table.

const { isTrue } = require('./http-util');

const DOC_ITEM = /^\/dbs\/([^/]+)\/colls\/([^/]+)\/docs\/([^/]+)$/;
const DOC_FEED = /^\/dbs\/([^/]+)\/colls\/([^/]+)\/docs$/;

function normalizePath(url) {
  let pathname = url.split('?')[0];
  // Some clients send a doubled leading slash; trailing slashes are ignored.
  while (pathname.startsWith('//')) pathname = pathname.slice(1);
  while (pathname.length > 1 && pathname.endsWith('/')) pathname = pathname.slice(0, -1);
  return pathname;
}

function decode(segment) {
  try {
    return decodeURIComponent(segment);
  } catch (e) {
    return segment;
  }
}

// -> { kind, route: 'item'|'feed'|'stock', dbId, collId, docId }
function classify(req, path) {
  const item = DOC_ITEM.exec(path);
  if (item) {
    return {
      kind: req.method === 'GET' ? 'read' : 'write',
      route: 'item',
      dbId: decode(item[1]),
      collId: decode(item[2]),
      docId: decode(item[3]),
    };
  }
  const feed = DOC_FEED.exec(path);
  if (feed) {
    const info = { route: 'feed', dbId: decode(feed[1]), collId: decode(feed[2]) };
    if (req.method === 'GET') return { ...info, kind: 'readfeed' };
    if (req.method === 'POST') return { ...info, kind: feedPostKind(req) };
    return { ...info, kind: 'write' };
  }
  return { kind: 'metadata', route: 'stock' };
}

// A POST to a docs feed is told apart by headers alone, in the SDK's order of precedence.
function feedPostKind(req) {
  if (isTrue(req.headers['x-ms-cosmos-is-query-plan-request'])) return 'queryplan';
  const contentType = String(req.headers['content-type'] || '');
  if (isTrue(req.headers['x-ms-documentdb-isquery']) || contentType.startsWith('application/query+json')) return 'query';
  if (isTrue(req.headers['x-ms-cosmos-is-batch-request'])) return 'batch';
  return 'write';
}

module.exports = { classify, normalizePath };
