'use strict';

// Start-up and shutdown: settings, TLS material, both listeners, the ready
// line other tools wait for, and a clean exit on SIGTERM/SIGINT.

const { parseConfig, usage, ConfigError } = require('./config');
const { ensureTls } = require('./tls');
const { createCosmosServer } = require('./server');
const { createControlServer } = require('./control');
const { FaultRules } = require('./faults');
const { Stats } = require('./stats');
const { ThroughputBudget } = require('./throughput');
const { LoopMonitor } = require('./loop-monitor');
const { EntraIssuer } = require('./entra');

const VERSION = require('../package.json').version;

function log(message) {
  process.stderr.write(`tally-cosmos: ${message}\n`);
}

function fail(message, code = 1) {
  log(`error: ${message}`);
  process.exit(code);
}

function listen(server, port, host, what) {
  return new Promise((resolve, reject) => {
    const onError = (e) => {
      server.removeListener('listening', onListening);
      if (e.code === 'EADDRINUSE') reject(new Error(`${what} port ${port} on ${host} is already in use (EADDRINUSE); stop the other process or pick another port`));
      else if (e.code === 'EACCES') reject(new Error(`${what} port ${port} on ${host}: permission denied (EACCES)`));
      else if (e.code === 'EADDRNOTAVAIL') reject(new Error(`${what} host ${host} is not an address of this machine (EADDRNOTAVAIL)`));
      else reject(e);
    };
    const onListening = () => {
      server.removeListener('error', onError);
      resolve(server.address().port);
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });
}

function urlHost(host) {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

async function main(argv = process.argv.slice(2), env = process.env) {
  let config;
  try {
    config = parseConfig(argv, env);
  } catch (e) {
    if (e instanceof ConfigError) fail(e.message, 2);
    throw e;
  }
  if (config.help) {
    process.stdout.write(`${usage()}\n`);
    return;
  }

  let tls;
  try {
    tls = ensureTls(config.tlsDir, { log });
  } catch (e) {
    fail(`cannot prepare TLS material in ${config.tlsDir}: ${e.message}`);
  }

  const debug = /^(1|true|debug)$/i.test(env.TALLY_COSMOS_LOG || '');
  const faults = new FaultRules();
  const stats = new Stats();
  const throughput = new ThroughputBudget({ defaultRuPerSecond: config.throughput });
  const loop = new LoopMonitor();
  const entra = new EntraIssuer();
  const cosmos = createCosmosServer({ cert: tls.certPem, key: tls.keyPem, faults, stats, throughput, loop, entra, log, debug });
  let cosmosUrl = null;
  let controlUrl = null;
  const control = createControlServer({
    faults,
    stats,
    throughput,
    loop,
    entra,
    initialThroughput: config.throughput,
    info: () => ({ version: VERSION, cosmosEndpoint: cosmosUrl, controlEndpoint: controlUrl, truststore: tls.truststore }),
  });

  // Sockets are tracked so shutdown does not wait for idle keep-alive clients.
  const sockets = new Set();
  for (const server of [cosmos, control]) {
    server.on('connection', (s) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
  }

  try {
    const port = await listen(cosmos, config.port, config.host, 'Cosmos');
    cosmosUrl = `https://${urlHost(config.host)}:${port}`;
    const controlPort = await listen(control, config.controlPort, config.controlHost, 'control');
    controlUrl = `http://${config.controlHost}:${controlPort}`;
  } catch (e) {
    cosmos.close();
    fail(e.message);
  }

  let stopping = false;
  const stop = (signal) => {
    if (stopping) return;
    stopping = true;
    log(`${signal} received, shutting down`);
    let open = 2;
    const done = () => {
      open -= 1;
      if (open === 0) process.exit(0);
    };
    cosmos.close(done);
    control.close(done);
    for (const s of sockets) s.destroy();
    setTimeout(() => process.exit(0), 2000).unref();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  const limit = config.throughput ? `, ${config.throughput} RU/s per container` : '';
  log(`TLS truststore ${tls.truststore} (password ${tls.truststorePassword})${limit}`);
  process.stdout.write(`tally-cosmos ready ${cosmosUrl} control ${controlUrl}\n`);
}

module.exports = { main };
