'use strict';

// Entra ID tokens over HTTPS: the local issuer's endpoints, and the Cosmos port
// accepting a good token and refusing bad ones as the service does.

const test = require('node:test');
const assert = require('node:assert/strict');
const { startEndpoint, pk } = require('./support/endpoint');

let endpoint;
const call = (...args) => endpoint.call(...args);
const controlCall = (...args) => endpoint.controlCall(...args);
const aad = (token) => ({ authorization: encodeURIComponent(`type=aad&ver=1.0&sig=${token}`) });
const form = { 'content-type': 'application/x-www-form-urlencoded' };
const tokenRequest = (params) => call('POST', '/tenant-1/oauth2/v2.0/token', new URLSearchParams(params).toString(), form);

test.before(async () => {
  endpoint = await startEndpoint();
  await call('POST', '/dbs', { id: 'db' });
  await call('POST', '/dbs/db/colls', { id: 'c', partitionKey: { paths: ['/pk'], kind: 'Hash' } });
  assert.equal((await controlCall('POST', '/entra/clients', { clientId: 'app-1', clientSecret: 's3cret' })).status, 201);
});

test.after(() => endpoint.close());

test('OpenID metadata and JWKS describe the issuer on the same HTTPS port', async () => {
  const meta = await call('GET', '/tenant-1/v2.0/.well-known/openid-configuration');
  assert.equal(meta.status, 200);
  assert.equal(meta.body.issuer, `${endpoint.base}/tenant-1/v2.0`);
  assert.equal(meta.body.token_endpoint, `${endpoint.base}/tenant-1/oauth2/v2.0/token`);
  const keys = await call('GET', '/tenant-1/discovery/v2.0/keys');
  assert.equal(keys.body.keys.length, 1);
  assert.equal(keys.body.keys[0].kty, 'RSA');
});

test('client credentials give a token for the asked resource that the Cosmos port accepts', async () => {
  const r = await tokenRequest({ grant_type: 'client_credentials', client_id: 'app-1', client_secret: 's3cret', scope: 'https://127.0.0.1/.default' });
  assert.equal(r.status, 200);
  assert.equal(r.body.token_type, 'Bearer');
  const claims = JSON.parse(Buffer.from(r.body.access_token.split('.')[1], 'base64url').toString());
  assert.equal(claims.aud, 'https://127.0.0.1');
  assert.equal(claims.tid, 'tenant-1');
  const write = await call('POST', '/dbs/db/colls/c/docs', { id: 'a', pk: 'p' }, { ...pk('p'), ...aad(r.body.access_token) });
  assert.equal(write.status, 201);
  const read = await call('GET', '/dbs/db/colls/c/docs/a', undefined, { ...pk('p'), ...aad(r.body.access_token) });
  assert.equal(read.status, 200);
});

test('the token endpoint refuses a wrong secret, an unknown client and a scope without /.default', async () => {
  const wrong = await tokenRequest({ grant_type: 'client_credentials', client_id: 'app-1', client_secret: 'nope', scope: 'https://cosmos.azure.com/.default' });
  assert.equal(wrong.status, 401);
  assert.equal(wrong.body.error, 'invalid_client');
  assert.match(wrong.body.error_description, /^AADSTS7000215/);
  const unknown = await tokenRequest({ grant_type: 'client_credentials', client_id: 'app-2', client_secret: 'x', scope: 'https://cosmos.azure.com/.default' });
  assert.equal(unknown.body.error, 'unauthorized_client');
  const scope = await tokenRequest({ grant_type: 'client_credentials', client_id: 'app-1', client_secret: 's3cret', scope: 'https://cosmos.azure.com' });
  assert.equal(scope.body.error, 'invalid_scope');
});

async function minted(body) {
  const r = await controlCall('POST', '/entra/tokens', body);
  assert.equal(r.status, 201);
  return r.body.accessToken;
}

test('wrong audience, expired, not yet valid, badly signed and foreign-issuer tokens are 401', async () => {
  const cases = [
    [{ audience: 'https://storage.azure.com' }, /intended for \[https:\/\/storage.azure.com\]. This database account accepts tokens intended for \[https:\/\/cosmos.azure.com/],
    [{ lifetimeSeconds: -600 }, /Provided AAD token has been expired since/],
    [{ notBeforeSeconds: 600 }, /not valid before/],
    [{ signWithForeignKey: true }, /failed signature validation/],
    [{ issuer: 'https://login.microsoftonline.com/tally-local-tenant/v2.0' }, /which this account does not trust/],
  ];
  for (const [body, message] of cases) {
    const token = await minted(body);
    const r = await call('GET', '/dbs/db/colls/c/docs/a', undefined, { ...pk('p'), ...aad(token) });
    assert.equal(r.status, 401, JSON.stringify(body));
    assert.equal(r.body.code, 'Unauthorized');
    assert.match(r.body.message, /^Request blocked by Auth tally-local : /);
    assert.match(r.body.message, message);
  }
  const garbage = await call('GET', '/dbs/db/colls/c/docs/a', undefined, { ...pk('p'), ...aad('not-a-jwt') });
  assert.equal(garbage.status, 401);
  const tampered = (await minted({})).split('.');
  tampered[1] = Buffer.from(JSON.stringify({ aud: 'https://cosmos.azure.com', exp: 9999999999 })).toString('base64url');
  assert.equal((await call('GET', '/dbs/db/colls/c/docs/a', undefined, { ...pk('p'), ...aad(tampered.join('.')) })).status, 401);
});

test('a token may not create databases or containers (403/5300); a key still may', async () => {
  const token = await minted({});
  const db = await call('POST', '/dbs', { id: 'db2' }, aad(token));
  assert.equal(db.status, 403);
  assert.equal(db.headers['x-ms-substatus'], '5300');
  assert.match(db.body.message, /cannot be authorized by AAD token in data plane/);
  const coll = await call('POST', '/dbs/db/colls', { id: 'c2', partitionKey: { paths: ['/pk'], kind: 'Hash' } }, aad(token));
  assert.equal(coll.status, 403);
  assert.equal((await call('GET', '/dbs/db/colls/c', undefined, aad(token))).status, 200);
  const keyed = { authorization: encodeURIComponent('type=master&ver=1.0&sig=anything') };
  assert.equal((await call('POST', '/dbs', { id: 'db3' }, keyed)).status, 201);
});

test('control API lists the issuer and refuses a client without a secret', async () => {
  const bad = await controlCall('POST', '/entra/clients', { clientId: 'x' });
  assert.equal(bad.status, 400);
  const info = await controlCall('GET', '/entra');
  assert.deepEqual(info.body.clients, ['app-1']);
  assert.equal(info.body.authorityHost, `${endpoint.base}/`);
  assert.ok(info.body.refused >= 6);
});
