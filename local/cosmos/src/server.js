'use strict';

// The Cosmos listener: HTTPS, keep-alive, in front of @vercel/cosmosdb-server.
//
// The package is used for what it does well: the in-memory account model
// (databases, containers, documents, resource ids, etags), its route table and
// handlers for databases, containers, partition key ranges and UDFs, and its
// SQL parser/executor. Its own request handler is what fails with the Java
// SDK, so we install our own at start-up and wrap the package's route handlers
// with it:
//
//   pipeline.js           every request: classify (routing.js) -> fault rules
//                         -> handler -> RU charge, activity id, stats
//   document-requests.js  document paths (/dbs/{db}/colls/{coll}/docs[/{id}]),
//                         throughput budget first; queries and read feeds in
//                         feed-requests.js, operations in documents.js, batch.js
//   metadata-requests.js  everything else: the package's route handler, then
//                         our response headers
//
// Keys are not checked: any key is accepted. Entra ID tokens are: their
// signature, issuer, expiry and audience, against the local issuer in entra.js
// (README.md, "Entra ID tokens").

const https = require('https');
const Account = require('@vercel/cosmosdb-server/lib/account').default;

const docs = require('./documents');
const query = require('./query');
const { ThroughputBudget } = require('./throughput');
const { startSweeper } = require('./ttl');
const { PartitionIndex } = require('./partition-index');
const { LoopMonitor } = require('./loop-monitor');
const { createRequestPipeline } = require('./pipeline');
const { createDocumentRequests } = require('./document-requests');
const { handleMetadataRequest } = require('./metadata-requests');
const { EntraIssuer } = require('./entra');

// The SDK's gateway connection pool keeps idle connections for 60 s; closing
// them earlier on our side makes it write into dead sockets now and then.
const KEEP_ALIVE_TIMEOUT_MS = 120 * 1000;

function createCosmosServer({ cert, key, faults, stats, throughput = new ThroughputBudget(), loop = new LoopMonitor(), entra = new EntraIssuer(),
  log = () => {}, debug = false }) {
  // The account's resource links carry host and port, so it is made once the listener has them.
  let account = null;
  const handle = createRequestPipeline({
    handlers: {
      documents: createDocumentRequests({ account: () => account, throughput, stats, cursors: new query.CursorStore() }),
      metadata: (req, res) => handleMetadataRequest(account, req, res, throughput),
    },
    faults,
    stats,
    loop,
    log,
    debug,
    entra,
  });

  const server = https.createServer({ cert, key, keepAlive: true }, (req, res) => {
    handle(req, res).catch((e) => {
      log(`unhandled error: ${e.stack || e}`);
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ code: 'InternalServerError', message: String(e.message) }));
      }
    });
  });
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 5000;

  let stopSweeper = () => {};
  server.on('listening', () => {
    account = createAccount(server.address());
    entra.setBaseUrl(baseUrl(server.address()));
    stopSweeper = startSweeper({
      forEachCollection: (fn) => forEachIndexedCollection(account, fn),
      purge: (collection, index, data) => new docs.Container(collection).purge(data),
      log,
    });
  });
  server.on('close', () => stopSweeper());
  return server;
}

function createAccount({ address, port }) {
  const host = address === '0.0.0.0' || address === '::' ? 'localhost' : address;
  return new Account(host.includes(':') ? `[${host}]` : host, port);
}

function baseUrl({ address, port }) {
  const host = address === '0.0.0.0' || address === '::' ? '127.0.0.1' : address;
  return `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

function forEachIndexedCollection(account, fn) {
  for (const db of account.databases._data.values()) {
    for (const collection of db.collections._data.values()) {
      const index = collection.documents && collection.documents._data;
      if (index instanceof PartitionIndex) fn(collection, index);
    }
  }
}

module.exports = { createCosmosServer };
