'use strict';

// The endpoint's TLS material, generated per checkout: the package's bundled
// certificate expired in 2021 and names no IP, so the Java SDK (which verifies
// the chain and the host name) cannot use it. We make a self-signed server
// certificate for localhost/127.0.0.1 and a PKCS12 truststore holding it, which
// a JVM uses through -Djavax.net.ssl.trustStore (password "changeit").

const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const { execFileSync } = require('child_process');

const TRUSTSTORE_PASSWORD = 'changeit';
const CERT_DAYS = 3650;
// Regenerate a certificate that would expire within this window, so a long
// test run never straddles the expiry.
const RENEW_BEFORE_MS = 7 * 24 * 3600 * 1000;
const LOCK_STALE_MS = 60 * 1000;
const LOCK_WAIT_MS = 30 * 1000;

function paths(dir) {
  return {
    dir,
    cert: path.join(dir, 'cert.pem'),
    key: path.join(dir, 'key.pem'),
    truststore: path.join(dir, 'truststore.p12'),
  };
}

function certUsable(certFile, keyFile) {
  try {
    const cert = new crypto.X509Certificate(fs.readFileSync(certFile));
    const key = crypto.createPrivateKey(fs.readFileSync(keyFile));
    if (!cert.checkPrivateKey(key)) return false;
    if (Date.parse(cert.validTo) - Date.now() < RENEW_BEFORE_MS) return false;
    const san = cert.subjectAltName || '';
    return san.includes('DNS:localhost') && san.includes('IP Address:127.0.0.1');
  } catch (e) {
    return false;
  }
}

function sleepSync(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

// Several test JVMs may start the endpoint at once against the same directory;
// a lock directory (mkdir is atomic) keeps them from writing half-files over
// each other.
function withLock(dir, fn) {
  const lock = path.join(dir, '.lock');
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
      try {
        if (Date.now() - fs.statSync(lock).mtimeMs > LOCK_STALE_MS) {
          fs.rmSync(lock, { recursive: true, force: true });
          continue;
        }
      } catch (ignored) {
        continue; // removed by its owner between mkdir and stat
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for TLS lock ${lock}`);
      sleepSync(100);
    }
  }
  try {
    return fn();
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

function run(cmd, args) {
  try {
    return execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    if (e.code === 'ENOENT') throw new Error(`${cmd} not found on PATH; it is needed to generate the TLS certificate/truststore`);
    const stderr = e.stderr ? e.stderr.toString().trim() : '';
    throw new Error(`${cmd} ${args[0]} failed: ${stderr || e.message}`);
  }
}

function generateCertificate(p) {
  const tmpCert = `${p.cert}.${process.pid}.tmp`;
  const tmpKey = `${p.key}.${process.pid}.tmp`;
  run('openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-sha256',
    '-days', String(CERT_DAYS),
    '-keyout', tmpKey, '-out', tmpCert,
    '-subj', '/CN=localhost/O=Tally local Cosmos',
    '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
    '-addext', 'basicConstraints=critical,CA:FALSE',
    '-addext', 'keyUsage=critical,digitalSignature,keyEncipherment',
    '-addext', 'extendedKeyUsage=serverAuth',
  ]);
  fs.chmodSync(tmpKey, 0o600);
  fs.renameSync(tmpKey, p.key);
  fs.renameSync(tmpCert, p.cert);
}

function keytoolPath() {
  const javaHome = process.env.JAVA_HOME;
  if (javaHome) {
    const candidate = path.join(javaHome, 'bin', process.platform === 'win32' ? 'keytool.exe' : 'keytool');
    if (fs.existsSync(candidate)) return candidate;
  }
  return 'keytool';
}

function generateTruststore(p) {
  const tmp = `${p.truststore}.${process.pid}.tmp`;
  fs.rmSync(tmp, { force: true });
  run(keytoolPath(), [
    '-importcert', '-noprompt',
    '-alias', 'tally-local-cosmos',
    '-file', p.cert,
    '-keystore', tmp,
    '-storetype', 'PKCS12',
    '-storepass', TRUSTSTORE_PASSWORD,
  ]);
  fs.renameSync(tmp, p.truststore);
}

function truststoreCurrent(p) {
  try {
    return fs.statSync(p.truststore).mtimeMs >= fs.statSync(p.cert).mtimeMs;
  } catch (e) {
    return false;
  }
}

// Makes sure dir holds a usable cert.pem/key.pem and a truststore.p12 for it;
// returns the paths and the PEM contents.
function ensureTls(dir, { log = () => {} } = {}) {
  fs.mkdirSync(dir, { recursive: true });
  const p = paths(dir);
  if (!certUsable(p.cert, p.key) || !truststoreCurrent(p)) {
    withLock(dir, () => {
      if (!certUsable(p.cert, p.key)) {
        log(`generating TLS certificate in ${dir}`);
        generateCertificate(p);
      }
      if (!truststoreCurrent(p)) {
        log(`generating truststore ${p.truststore}`);
        generateTruststore(p);
      }
    });
  }
  return {
    ...p,
    truststorePassword: TRUSTSTORE_PASSWORD,
    certPem: fs.readFileSync(p.cert),
    keyPem: fs.readFileSync(p.key),
  };
}

module.exports = { ensureTls, TRUSTSTORE_PASSWORD };
