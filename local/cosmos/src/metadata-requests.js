'use strict';

// Everything but documents (the account, databases, containers, partition key
// ranges, UDFs): the package's own route handlers answer, and we turn what
// they wrote on the response into an outcome with our headers and charge.

const stockRoutes = require('@vercel/cosmosdb-server/lib/routes').default;
const RU = require('./request-units');
const { normalizePath } = require('./routing');
const { errorBody } = require('./responses');

// Headers of the package's handlers that the SDK reads on metadata feeds.
const PASSED_HEADERS = ['x-ms-continuation', 'x-ms-item-count'];

const CONTAINER_FEED = /^\/dbs\/([^/]+)\/colls$/;

// What a container create asked for: x-ms-offer-throughput (manual RU/s), the autoscale settings header, or
// neither (no throughput of its own). Recorded for GET /throughput; the budget stays --throughput's (README.md).
function requestedOffer(req) {
  const manual = req.headers['x-ms-offer-throughput'];
  const autopilot = req.headers['x-ms-cosmos-offer-autopilot-settings'];
  if (manual !== undefined) return { mode: 'manual', ruPerSecond: Number(manual) };
  if (autopilot !== undefined) {
    try {
      return { mode: 'autoscale', maxRuPerSecond: JSON.parse(autopilot).maxThroughput };
    } catch (e) {
      return { mode: 'autoscale', raw: String(autopilot) };
    }
  }
  return { mode: 'none' };
}

async function handleMetadataRequest(account, req, res, throughput) {
  const route = stockRoutes(req);
  if (!route) {
    return { status: 400, body: errorBody('BadRequest', `no route for ${req.method} ${req.url}`), charge: 0 };
  }
  const [params, handler] = route;
  res.statusCode = 200;
  let body = await handler(account, req, res, params);
  let status = res.statusCode;
  const headers = {};
  for (const name of PASSED_HEADERS) {
    const v = res.getHeader(name);
    if (v !== undefined) headers[name] = String(v);
  }
  if (status >= 400 && body && body.message === undefined) body = { code: String(status), message: '', ...body };
  // Partition key ranges are read as an incremental feed; the ranges never
  // change here, so every conditional re-read is "not modified".
  if (req.headers['a-im'] && status === 200) {
    if (req.headers['if-none-match']) status = 304;
    headers.etag = '"1"';
  }
  const created = req.method === 'POST' && status === 201 && CONTAINER_FEED.exec(normalizePath(req.url));
  if (created && throughput && body && body.id) throughput.recordOffer(`${decodeURIComponent(created[1])}/${body.id}`, requestedOffer(req));
  const charge = req.method === 'GET' && normalizePath(req.url) === '/' ? 0 : RU.metadata();
  return { status, body, charge, headers };
}

module.exports = { handleMetadataRequest };
