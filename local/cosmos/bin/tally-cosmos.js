#!/usr/bin/env node
// Entry point of the local Cosmos DB endpoint. Written in old syntax on
// purpose: it must run far enough on any Node to say that Node >= 20 is needed.
'use strict';

var major = Number(String(process.versions.node).split('.')[0]);
if (!(major >= 20)) {
  process.stderr.write(
    'tally-cosmos: error: Node.js >= 20 is required, this is ' + process.version +
      ' (' + process.execPath + '). Install Node 20 or newer and put it first on PATH.\n'
  );
  process.exit(1);
}

require('../src/main')
  .main()
  .catch(function (e) {
    process.stderr.write('tally-cosmos: error: ' + (e && e.stack ? e.stack : e) + '\n');
    process.exit(1);
  });
