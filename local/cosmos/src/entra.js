'use strict';

// Microsoft Entra ID, locally: a token issuer (OAuth 2.0 client-credentials
// token endpoint, OpenID metadata, JWKS) served on the Cosmos HTTPS port, and
// the check the Cosmos endpoint applies to an `Authorization: type=aad&ver=1.0&sig=<JWT>`
// header. README.md ("Entra ID tokens") describes both and the service's answers they copy.
//
// Why on the Cosmos port: MSAL (under azure-identity) refuses an authority that
// is not https://, and the Cosmos listener already has a certificate the JVM
// trusts. The issuer's paths start with a tenant segment followed by
// `oauth2/v2.0/token`, `v2.0/.well-known/openid-configuration` or
// `discovery/v2.0/keys`, which no Cosmos path does (they start with /dbs, /offers or are /).

const crypto = require('crypto');

const TOKEN_PATH = /^\/([^/]+)\/oauth2\/v2\.0\/token$/;
const OPENID_PATH = /^\/([^/]+)\/v2\.0\/\.well-known\/openid-configuration$/;
const KEYS_PATH = /^\/([^/]+)\/discovery\/v2\.0\/keys$/;

// What Cosmos DB accepts besides the account's own URI (its Java SDK falls back to this scope).
const COSMOS_AUDIENCE = 'https://cosmos.azure.com';
const DEFAULT_LIFETIME_S = 3600;
const ACCOUNT = 'tally-local';

const b64url = (buf) => Buffer.from(buf).toString('base64url');

class EntraIssuer {
  constructor() {
    this.key = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
    // A second key the issuer never publishes: tokens signed with it are "badly signed" for tests.
    this.foreignKey = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
    this.kid = crypto.randomBytes(8).toString('hex');
    this.clients = new Map();
    this.baseUrl = null; // set once the Cosmos listener knows its port
    this.tokensIssued = 0;
    this.refused = 0;
  }

  setBaseUrl(url) {
    this.baseUrl = url;
  }

  registerClient(clientId, clientSecret) {
    if (typeof clientId !== 'string' || !clientId || typeof clientSecret !== 'string' || !clientSecret) {
      throw new Error('expected {"clientId": "...", "clientSecret": "..."}, both non-empty strings');
    }
    this.clients.set(clientId, clientSecret);
  }

  issuerFor(tenant) {
    return `${this.baseUrl}/${tenant}/v2.0`;
  }

  // The audiences this endpoint accepts, as the service does: its account URI (the SDK asks for
  // scheme://host without the port) and the generic Cosmos resource.
  acceptedAudiences() {
    const url = new URL(this.baseUrl);
    const hosts = new Set([url.hostname, '127.0.0.1', 'localhost']);
    const list = [COSMOS_AUDIENCE];
    for (const h of hosts) list.push(`https://${h}`, `https://${h}:${url.port}`);
    return list;
  }

  // A signed JWT. Options exist so tests can mint the tokens the endpoint must refuse.
  issue({ tenant = 'tally-local-tenant', clientId = 'tally-local-client', audience = COSMOS_AUDIENCE, lifetimeS = DEFAULT_LIFETIME_S,
    notBeforeS = 0, foreignKey = false, issuer } = {}) {
    const now = Math.floor(Date.now() / 1000);
    const header = { typ: 'JWT', alg: 'RS256', kid: this.kid };
    const oid = uuidFrom(`${tenant}/${clientId}`);
    const payload = {
      aud: audience,
      iss: issuer || this.issuerFor(tenant),
      iat: now,
      nbf: now + notBeforeS,
      exp: now + lifetimeS,
      tid: tenant,
      azp: clientId,
      appid: clientId,
      oid,
      sub: oid,
      ver: '2.0',
    };
    const signingInput = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(payload))}`;
    const signature = crypto.sign('RSA-SHA256', Buffer.from(signingInput), (foreignKey ? this.foreignKey : this.key).privateKey);
    this.tokensIssued += 1;
    return { token: `${signingInput}.${b64url(signature)}`, expiresOn: payload.exp };
  }

  jwks() {
    const jwk = this.key.publicKey.export({ format: 'jwk' });
    return { keys: [{ ...jwk, kid: this.kid, use: 'sig', alg: 'RS256' }] };
  }

  openidConfiguration(tenant) {
    const base = `${this.baseUrl}/${tenant}`;
    return {
      issuer: this.issuerFor(tenant),
      token_endpoint: `${base}/oauth2/v2.0/token`,
      authorization_endpoint: `${base}/oauth2/v2.0/authorize`,
      jwks_uri: `${base}/discovery/v2.0/keys`,
      token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic'],
      grant_types_supported: ['client_credentials'],
      response_types_supported: ['token'],
      id_token_signing_alg_values_supported: ['RS256'],
      subject_types_supported: ['pairwise'],
      tenant_region_scope: 'local',
    };
  }

  // The token endpoint: the client-credentials grant with a client secret, answered in Entra's
  // shape (errors carry an AADSTS code, which MSAL and the Cosmos SDK read).
  tokenResponse(tenant, form, authorizationHeader) {
    let clientId = form.get('client_id');
    let clientSecret = form.get('client_secret');
    const basic = /^Basic\s+(.+)$/i.exec(authorizationHeader || '');
    if (basic) {
      const [id, ...secret] = Buffer.from(basic[1], 'base64').toString('utf8').split(':');
      clientId = decodeURIComponent(id);
      clientSecret = decodeURIComponent(secret.join(':'));
    }
    if (form.get('grant_type') !== 'client_credentials') {
      return oauthError(400, 'unsupported_grant_type', 70003, `The app requested an unsupported grant type '${form.get('grant_type')}'; this issuer knows client_credentials only.`);
    }
    if (!clientId || !this.clients.has(clientId)) {
      return oauthError(400, 'unauthorized_client', 700016, `Application with identifier '${clientId}' was not found in the directory '${tenant}'.`);
    }
    if (!clientSecret) {
      return oauthError(401, 'invalid_client', 7000216, "'client_assertion', 'client_secret' or 'request' is required for the 'client_credentials' grant type.");
    }
    if (!timingSafeEqual(clientSecret, this.clients.get(clientId))) {
      return oauthError(401, 'invalid_client', 7000215, `Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app '${clientId}'.`);
    }
    const scopes = (form.get('scope') || '').split(/\s+/).filter(Boolean);
    const resources = scopes.filter((s) => s.endsWith('/.default')).map((s) => s.slice(0, -'/.default'.length));
    if (resources.length !== 1) {
      return oauthError(400, 'invalid_scope', 1002012, `The provided value for scope ${form.get('scope')} is not valid. Client credential flows must have a scope value with /.default suffixed to the resource identifier (application ID URI).`);
    }
    const { token } = this.issue({ tenant, clientId, audience: resources[0] });
    return { status: 200, body: { token_type: 'Bearer', expires_in: DEFAULT_LIFETIME_S, ext_expires_in: DEFAULT_LIFETIME_S, access_token: token } };
  }

  // -> null when the header is not an AAD token; else { ok: true, claims } or a refusal
  // { status, subStatus, message } in the service's words.
  verifyAuthorization(rawHeader, now = Date.now()) {
    const token = aadSignature(rawHeader);
    if (token === null) return null;
    const refuse = (message, subStatus = 0) => {
      this.refused += 1;
      return { ok: false, status: 401, subStatus, message: `Request blocked by Auth ${ACCOUNT} : ${message}` };
    };
    const parts = token.split('.');
    if (parts.length !== 3) return refuse('The provided AAD token is not a JWT (expected three dot-separated parts).');
    let header;
    let claims;
    try {
      header = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8'));
      claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    } catch (e) {
      return refuse('The provided AAD token could not be decoded.');
    }
    if (header.alg !== 'RS256' || header.kid !== this.kid) {
      return refuse(`The provided AAD token is signed with a key [kid ${header.kid}, alg ${header.alg}] that the issuer does not publish.`);
    }
    const valid = crypto.verify('RSA-SHA256', Buffer.from(`${parts[0]}.${parts[1]}`), this.key.publicKey, Buffer.from(parts[2], 'base64url'));
    if (!valid) return refuse('The provided AAD token failed signature validation.');
    if (!claims.tid || claims.iss !== this.issuerFor(claims.tid)) {
      return refuse(`The provided AAD token was issued by [${claims.iss}], which this account does not trust.`);
    }
    const nowS = Math.floor(now / 1000);
    if (typeof claims.exp !== 'number' || claims.exp <= nowS) {
      return refuse(`Provided AAD token has been expired since [${new Date((claims.exp || 0) * 1000).toUTCString()}]. Current server time is [${new Date(now).toUTCString()}]. Please refresh the AAD token.`);
    }
    if (typeof claims.nbf === 'number' && claims.nbf > nowS) {
      return refuse(`Provided AAD token is not valid before [${new Date(claims.nbf * 1000).toUTCString()}]. Current server time is [${new Date(now).toUTCString()}].`);
    }
    const accepted = this.acceptedAudiences();
    const aud = String(claims.aud || '').replace(/\/+$/, '');
    if (!accepted.includes(aud)) {
      return refuse(`Provided AAD token is intended for [${claims.aud}]. This database account accepts tokens intended for [${accepted.join(', ')}].`);
    }
    return { ok: true, claims };
  }

  snapshot() {
    return {
      baseUrl: this.baseUrl,
      authorityHost: this.baseUrl ? `${this.baseUrl}/` : null,
      clients: [...this.clients.keys()],
      audiences: this.baseUrl ? this.acceptedAudiences() : [],
      tokensIssued: this.tokensIssued,
      refused: this.refused,
    };
  }
}

// `type=aad&ver=1.0&sig=<JWT>`, URL-encoded as a whole by the Java SDK (AadTokenAuthorizationHelper).
function aadSignature(rawHeader) {
  if (!rawHeader) return null;
  let decoded;
  try {
    decoded = decodeURIComponent(String(rawHeader));
  } catch (e) {
    return null;
  }
  if (!/^type=aad&/i.test(decoded)) return null;
  const sig = /(?:^|&)sig=(.*)$/.exec(decoded);
  return sig ? sig[1].trim() : '';
}

// A request that creates, replaces or deletes a database, container or offer: control plane.
function isControlPlaneWrite(req, info) {
  if (info.route !== 'stock' || req.method === 'GET' || req.method === 'HEAD') return false;
  const isQuery = String(req.headers['x-ms-documentdb-isquery'] || '').toLowerCase() === 'true'
    || String(req.headers['content-type'] || '').startsWith('application/query+json');
  return !isQuery;
}

function controlPlaneRefusal(req, path) {
  return {
    status: 403,
    subStatus: 5300,
    message: `Request blocked by Auth ${ACCOUNT} : The given request [${req.method} ${path}] cannot be authorized by AAD token in data plane. Learn more: https://aka.ms/cosmos-native-rbac.`,
  };
}

// -> { kind: 'token'|'openid'|'keys', tenant } or null
function issuerRoute(method, path) {
  let m = TOKEN_PATH.exec(path);
  if (m && method === 'POST') return { kind: 'token', tenant: decodeURIComponent(m[1]) };
  m = OPENID_PATH.exec(path);
  if (m && method === 'GET') return { kind: 'openid', tenant: decodeURIComponent(m[1]) };
  m = KEYS_PATH.exec(path);
  if (m && method === 'GET') return { kind: 'keys', tenant: decodeURIComponent(m[1]) };
  return null;
}

function oauthError(status, error, code, description) {
  return {
    status,
    body: {
      error,
      error_description: `AADSTS${code}: ${description}`,
      error_codes: [code],
      timestamp: new Date().toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z'),
      trace_id: crypto.randomUUID(),
      correlation_id: crypto.randomUUID(),
    },
  };
}

function timingSafeEqual(a, b) {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && crypto.timingSafeEqual(x, y);
}

function uuidFrom(text) {
  const h = crypto.createHash('sha256').update(text).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

module.exports = { EntraIssuer, issuerRoute, isControlPlaneWrite, controlPlaneRefusal, aadSignature, COSMOS_AUDIENCE };
