'use strict';

// Writing a Cosmos response: the headers every answer carries (activity id,
// request charge, gateway version) and the JSON body the SDK parses.

function errorBody(code, message) {
  return { code, message };
}

function send(res, status, body, { charge = 0, subStatus, retryAfterMs, extraHeaders, activityId } = {}) {
  const headers = {
    'x-ms-activity-id': activityId,
    'x-ms-request-charge': charge.toFixed(2),
    'x-ms-gatewayversion': 'tally-local-cosmos',
    ...extraHeaders,
  };
  if (subStatus) headers['x-ms-substatus'] = String(subStatus);
  if (retryAfterMs !== undefined && retryAfterMs !== null) headers['x-ms-retry-after-ms'] = String(retryAfterMs);
  if (body && body._etag && !headers.etag) headers.etag = body._etag;
  let payload = null;
  if (body !== undefined && body !== null && status !== 204 && status !== 304) {
    payload = Buffer.from(JSON.stringify(body));
    headers['content-type'] = 'application/json';
  }
  headers['content-length'] = payload ? payload.length : 0;
  res.writeHead(status, headers);
  res.end(payload);
}

module.exports = { send, errorBody };
