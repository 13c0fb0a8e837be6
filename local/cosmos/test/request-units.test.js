'use strict';

const test = require('node:test');
const { describe, before, after } = require('node:test');
const assert = require('node:assert/strict');
const RU = require('../src/request-units');

test('a point read of a document up to 1 KB costs 1 RU', () => {
  assert.equal(RU.pointRead(200), 1);
  assert.equal(RU.pointRead(1024), 1);
});

test('reads grow by ~0.1 RU per extra KB (100 KB ~ 10.9 RU)', () => {
  assert.equal(RU.pointRead(100 * 1024), 10.9);
});

test('small writes cost 4-11 RU: create < replace, delete ~ create', () => {
  const create = RU.create(500);
  const replace = RU.replace(500);
  assert.ok(create >= 4.9 && create <= 10, `create ${create}`);
  assert.ok(replace > create && replace <= 11, `replace ${replace}`);
  assert.equal(RU.remove(500), create);
});

test('writes follow the index terms: fewer indexed properties, cheaper writes', () => {
  assert.equal(RU.create(1024), 4.95); // 10 terms (the reference): the published 1 KB figure
  assert.equal(RU.replace(1024), 9.9); // twice the create
  assert.equal(RU.create(1024, 3), 4.25);
  assert.equal(RU.replace(1024, 3, 3), 8.5);
  assert.equal(RU.create(1024, 0), 3.95);
  assert.equal(RU.create(1024, 11), 5.05);
  assert.equal(RU.replace(1024, 10, 12), 10.1); // the terms of both sides count
});

test('bigger documents cost more to write', () => {
  assert.ok(RU.create(50 * 1024) > RU.create(1024) + 10);
  assert.ok(RU.create(1024 * 1024) > 100 * RU.create(1024));
});

test('queries are charged by documents scanned and returned', () => {
  const one = RU.query({ scanned: 1, returned: 1, returnedBytes: 300 });
  assert.ok(one > 2.5 && one < 3.5, `one-document query ${one}`);
  const wide = RU.query({ scanned: 10000, returned: 10, returnedBytes: 3000 });
  assert.ok(wide > one + 90, `scanning 10k documents must be much dearer: ${wide}`);
  assert.ok(RU.query({ scanned: 100, returned: 100, returnedBytes: 30000 }) > RU.query({ scanned: 100, returned: 1, returnedBytes: 300 }));
});

test('sizeOf measures serialized UTF-8 bytes', () => {
  assert.equal(RU.sizeOf({ a: 'é' }), Buffer.byteLength('{"a":"é"}'));
  assert.equal(RU.sizeOf(undefined), 0);
});

// Microsoft Learn, "Understand request units consumption in Azure Cosmos DB",
// table "Document size", column "Write Operation" (RU by document size).
const PUBLISHED_WRITES = [
  [1, 4.95], [2, 6.29], [4, 6.67], [8, 7.04], [16, 9.52], [32, 11.23], [64, 22.67],
  [128, 48.19], [256, 98.29], [512, 184.57], [1024, 625.0], [2048, 1250.0],
];
const KB = 1024;

const within = (actual, expected, share, what) =>
  assert.ok(Math.abs(actual - expected) <= share * expected, `${what}: ${actual}, expected ${expected} +-${share * 100}%`);

test('a create at every published size (reference terms) is the published write charge within 2%', () => {
  assert.equal(RU.RU.REFERENCE_TERMS, RU.RU.DEFAULT_TERMS);
  for (const [kb, ru] of PUBLISHED_WRITES) {
    within(RU.create(kb * KB, RU.RU.REFERENCE_TERMS), ru, 0.02, `create ${kb} KB`);
    within(RU.create(kb * KB), ru, 0.02, `create ${kb} KB, default terms`);
    within(RU.writeSize(kb * KB), ru, 0.02, `curve ${kb} KB`);
    within(RU.remove(kb * KB), ru, 0.02, `delete ${kb} KB`);
  }
});

test('the write curve never falls as documents grow, from 0 bytes to past 2 MB', () => {
  let previous = -Infinity;
  for (let bytes = 0; bytes <= 2100 * KB; bytes += 97) {
    const ru = RU.writeSize(bytes);
    assert.ok(ru >= previous, `curve falls at ${bytes} bytes: ${ru} < ${previous}`);
    previous = ru;
  }
  const charged = [0, 200, 1024, 1500, 3000, 4096, 6000, 20000, 65536, 100000, 1e6, 2097152].map((b) => RU.create(b));
  charged.slice(1).forEach((ru, i) => assert.ok(ru >= charged[i], `create charge falls: ${charged}`));
});

test('between published sizes the curve lies between its neighbours, linear in bytes', () => {
  for (let i = 1; i < PUBLISHED_WRITES.length; i += 1) {
    const [x0, y0] = PUBLISHED_WRITES[i - 1];
    const [x1, y1] = PUBLISHED_WRITES[i];
    for (const t of [0.1, 0.25, 0.5, 0.75, 0.9]) {
      const kb = x0 + t * (x1 - x0);
      const ru = RU.writeSize(kb * KB);
      assert.ok(ru > y0 && ru < y1, `${kb} KB: ${ru} not between ${y0} and ${y1}`);
      within(ru, y0 + t * (y1 - y0), 1e-9, `${kb} KB`);
    }
  }
  // e.g. 3 KB halfway between 2 KB (6.29) and 4 KB (6.67); 48 KB halfway between 32 and 64 KB.
  assert.equal(RU.create(3 * KB), 6.48);
  assert.equal(RU.create(48 * KB), 16.95);
});

test('below 1 KB the charge is floored at the 1 KB figure', () => {
  for (const bytes of [0, 1, 300, 700, 1023, 1024]) assert.equal(RU.writeSize(bytes), 4.95);
  assert.equal(RU.create(300), 4.95);
  assert.equal(RU.create(300, 3), 4.25); // a small bucket under Tally's indexing policy
  assert.equal(RU.replace(300, 3, 3), 8.5);
});

test('past the last published size the curve goes on with the last segment\'s slope', () => {
  const slope = (1250 - 625) / 1024; // RU per KB between 1 MB and 2 MB
  within(RU.writeSize(2049 * KB), 1250 + slope, 1e-9, '2049 KB');
  within(RU.writeSize(2100 * KB), 1250 + 52 * slope, 1e-9, '2100 KB');
});

test('replace, upsert over an item and patch cost twice the create of the resulting document', () => {
  for (const [kb, ru] of PUBLISHED_WRITES) {
    within(RU.replace(kb * KB), 2 * ru, 0.02, `replace ${kb} KB`);
    assert.equal(RU.replace(kb * KB, 3, 3), Math.round(2 * RU.create(kb * KB, 3) * 100) / 100);
  }
});

// Through the server: a real document of 4 KB as stored (with the system
// properties the endpoint adds), charged by the curve plus the term component.
describe('write charges through the server', () => {
  const { startEndpoint, pk } = require('./support/endpoint');
  const { termsOf } = require('../src/indexing');
  let endpoint;
  const call = (...args) => endpoint.call(...args);

  before(async () => {
    endpoint = await startEndpoint();
    await call('POST', '/dbs', { id: 'ru' });
    await call('POST', '/dbs/ru/colls', { id: 'all', partitionKey: { paths: ['/pk'], kind: 'Hash' } });
    await call('POST', '/dbs/ru/colls', {
      id: 'narrow',
      partitionKey: { paths: ['/pk'], kind: 'Hash' },
      indexingPolicy: {
        indexingMode: 'consistent',
        includedPaths: [{ path: '/grade/?' }, { path: '/unit/?' }, { path: '/bucket/?' }],
        excludedPaths: [{ path: '/*' }],
      },
    });
  });

  after(() => endpoint && endpoint.close());

  // A document whose stored form is `target` bytes: a probe measures what the
  // endpoint adds (_rid, _self, _etag, _attachments, _ts), then the padding fits.
  let made = 0;
  async function createSized(coll, fields, target, id = `doc-${coll}-${(made += 1)}`) {
    const path = `/dbs/ru/colls/${coll}/docs`;
    const probe = { id: `probe-${id}`, pk: 'p', ...fields, pad: '' };
    const probed = await call('POST', path, probe, pk('p'));
    assert.equal(probed.status, 201);
    const overhead = RU.sizeOf(probed.body) - RU.sizeOf(probe);
    const doc = { id, pk: 'p', ...fields, pad: '' };
    doc.pad = 'x'.repeat(target - overhead - RU.sizeOf(doc));
    const created = await call('POST', path, doc, pk('p'));
    assert.equal(created.status, 201);
    const stored = RU.sizeOf(created.body);
    assert.ok(Math.abs(stored - target) <= 16, `stored size ${stored}, wanted ${target}`);
    return { created, charge: Number(created.headers['x-ms-request-charge']), stored };
  }

  test('a 4 KB create with every property indexed (10 terms) costs the published 6.67 RU within 5%', async () => {
    // Ten indexed leaves (f0..f8 and pad); id and partition key are not counted.
    const fields = Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`f${i}`, i]));
    const { created, charge, stored } = await createSized('all', fields, 4 * KB, 'doc-4k');
    assert.equal(termsOf({ data: {} }, created.body, '/pk'), 10);
    within(charge, 6.67 + 0 /* 10 terms: the reference, no term component */, 0.05, `4 KB create (${stored} B)`);
    assert.equal(charge, RU.create(stored, 10));

    // A patch is charged as a replace of the resulting document: twice the create.
    const patched = await call('PATCH', '/dbs/ru/colls/all/docs/doc-4k',
      { operations: [{ op: 'set', path: '/f0', value: 7 }] }, pk('p'));
    assert.equal(patched.status, 200);
    const patchCharge = Number(patched.headers['x-ms-request-charge']);
    within(patchCharge, 2 * 6.67, 0.05, '4 KB patch');
    assert.equal(patchCharge, RU.replace(RU.sizeOf(patched.body), 10, 10));

    const deleted = await call('DELETE', '/dbs/ru/colls/all/docs/doc-4k', undefined, pk('p'));
    assert.equal(deleted.status, 204);
    within(Number(deleted.headers['x-ms-request-charge']), 6.67, 0.05, '4 KB delete');
  });

  test('a 4 KB create under Tally\'s indexing policy (3 terms) costs 6.67 - 7 x 0.1 RU within 5%', async () => {
    const fields = { grade: 'spend', unit: 'hour', bucket: '2026-01-01T00:00:00Z', sum: 10.5, count: 2 };
    const { charge, stored } = await createSized('narrow', fields, 4 * KB);
    within(charge, 6.67 + 0.1 * (3 - 10), 0.05, `4 KB create under a narrow policy (${stored} B)`);
  });

  test('a bigger document costs what the curve says: 32 KB about 11.23 RU', async () => {
    const fields = Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`f${i}`, i]));
    const { charge } = await createSized('all', { ...fields, big: true }, 32 * KB);
    within(charge, 11.23 + 0.1 * (11 - 10), 0.05, '32 KB create');
  });
});
