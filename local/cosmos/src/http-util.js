'use strict';

// Small helpers shared by the Cosmos and the control listeners.

const MAX_BODY_BYTES = 16 * 1024 * 1024;

class BodyError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

function readBody(req, limit = MAX_BODY_BYTES) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > limit) {
        reject(new BodyError(413, `request body larger than ${limit} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      req.bodyBytes = size; // what the request carried, for the stats' bytes received
      resolve(Buffer.concat(chunks));
    });
    req.on('error', reject);
  });
}

async function readJson(req) {
  const raw = await readBody(req);
  if (raw.length === 0) return undefined;
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch (e) {
    throw new BodyError(400, `request body is not valid JSON: ${e.message}`);
  }
}

function isTrue(value) {
  if (value === undefined || value === null) return false;
  const v = Array.isArray(value) ? value[0] : value;
  return String(v).trim().toLowerCase() === 'true';
}

function header(req, name) {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

module.exports = { readBody, readJson, isTrue, header, sleep, BodyError };
