/** `GET/PATCH /experimental-features` and the features each flag gates, through real HTTP. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Engine } from '../../src/engine/engine.js';
import { engineDumpSource } from '../../src/engine/ops/dump/engine-source.js';
import { importDump } from '../../src/engine/ops/dump/import.js';
import { writeDump } from '../../src/engine/ops/dump/writer.js';
import { movies } from '../data.js';
import { expectErrorShape, startHarness, type Harness } from './harness.js';

const FLAGS = [
  'chatCompletions',
  'compositeEmbedders',
  'containsFilter',
  'dynamicSearchRules',
  'editDocumentsByFunction',
  'foreignKeys',
  'getTaskDocumentsRoute',
  'logsRoute',
  'metrics',
  'multimodal',
  'network',
  'renderRoute',
  'taskQueueCompactionRoute',
  'vectorStoreSetting',
];

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  const created = await h.request('POST', '/indexes/movies/documents', { json: movies().slice(0, 50) });
  await h.wait(created.body.taskUid);
  const settings = await h.request('PATCH', '/indexes/movies/settings', { json: { filterableAttributes: ['title', 'genres'] } });
  await h.wait(settings.body.taskUid);
});
afterAll(async () => {
  await h.stop();
});

async function setFlags(json: Record<string, unknown>) {
  const reply = await h.request('PATCH', '/experimental-features', { json });
  expect(reply.status, reply.text).toBe(200);
  return reply.body;
}

describe('the flags', () => {
  test('GET lists every documented flag, all off by default', async () => {
    const reply = await h.request('GET', '/experimental-features');
    expect(reply.status).toBe(200);
    expect(Object.keys(reply.body).sort()).toEqual(FLAGS);
    expect(Object.values(reply.body).every((v) => v === false)).toBe(true);
  });

  test('PATCH changes only the flags it names (null keeps a flag) and answers every flag', async () => {
    const body = await setFlags({ logsRoute: true, network: null });
    expect(Object.keys(body).sort()).toEqual(FLAGS);
    expect(body).toMatchObject({ logsRoute: true, network: false, metrics: false });
    expect((await h.request('GET', '/experimental-features')).body.logsRoute).toBe(true);
    expect((await setFlags({ logsRoute: false })).logsRoute).toBe(false);
  });

  test('PATCH refuses unknown flags and non-boolean values with bad_request, changing nothing', async () => {
    const unknown = await h.request('PATCH', '/experimental-features', { json: { vectorStore: true } });
    expect(unknown.status).toBe(400);
    expectErrorShape(unknown.body, 'bad_request');
    expect(unknown.body.message).toMatch(/^Unknown field `vectorStore`: expected one of `metrics`, `logsRoute`/);
    const wrongType = await h.request('PATCH', '/experimental-features', { json: { metrics: 'yes', logsRoute: true } });
    expect(wrongType.status).toBe(400);
    expectErrorShape(wrongType.body, 'bad_request');
    expect(wrongType.body.message).toBe('Invalid value type at `.metrics`: expected a boolean, but found a string: `"yes"`');
    expect((await h.request('GET', '/experimental-features')).body.logsRoute).toBe(false);
    const notObject = await h.request('PATCH', '/experimental-features', { json: [true] });
    expectErrorShape(notObject.body, 'bad_request');
  });
});

describe('gates', () => {
  test('CONTAINS and STARTS WITH filters need containsFilter', async () => {
    await setFlags({ containsFilter: false });
    for (const filter of ['title CONTAINS "the"', 'NOT title STARTS WITH "The"']) {
      const refused = await h.request('POST', '/indexes/movies/search', { json: { filter } });
      expect(refused.status).toBe(400);
      expectErrorShape(refused.body, 'feature_not_enabled');
      expect(refused.body.message).toContain(
        'Using `CONTAINS` in a filter requires enabling the `contains filter` experimental feature. See https://github.com/orgs/meilisearch/discussions/763',
      );
    }
    const docs = await h.request('POST', '/indexes/movies/documents/fetch', { json: { filter: 'title CONTAINS "the"' } });
    expectErrorShape(docs.body, 'feature_not_enabled');

    await setFlags({ containsFilter: true });
    const allowed = await h.request('POST', '/indexes/movies/search', { json: { filter: 'title STARTS WITH "The"', limit: 100 } });
    expect(allowed.status, allowed.text).toBe(200);
    const want = movies()
      .slice(0, 50)
      .filter((m) => m.title.toLowerCase().startsWith('the')).length;
    expect(allowed.body.hits.length).toBe(want);
    expect(want).toBeGreaterThan(0);
    await setFlags({ containsFilter: false });
  });

  test('composite embedders need compositeEmbedders; refused before any task exists', async () => {
    const before = (await h.request('GET', '/tasks')).body.total;
    const composite = {
      embedders: {
        both: {
          source: 'composite',
          indexingEmbedder: { source: 'huggingFace' },
          searchEmbedder: { source: 'rest', url: 'http://localhost:1/x', request: { t: '{{text}}' }, response: { e: '{{embedding}}' } },
        },
      },
    };
    const refused = await h.request('PATCH', '/indexes/movies/settings', { json: composite });
    expect(refused.status).toBe(400);
    expectErrorShape(refused.body, 'feature_not_enabled');
    expect(refused.body.message).toBe(
      'using `"composite"` as source requires enabling the `composite embedders` experimental feature. See https://github.com/orgs/meilisearch/discussions/816',
    );
    expect((await h.request('GET', '/tasks')).body.total).toBe(before);
  });
});

describe('persistence', () => {
  test('flags survive a restart; serve options add to them for one run only', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'search-features-'));
    try {
      let engine = await Engine.open({ dbPath: dir, logLevel: 'off', instanceFeatures: { metrics: true } });
      expect(engine.getExperimentalFeatures()).toMatchObject({ metrics: true, editDocumentsByFunction: false });
      engine.updateExperimentalFeatures({ editDocumentsByFunction: true });
      await engine.close();
      engine = await Engine.open({ dbPath: dir, logLevel: 'off', instanceFeatures: {} });
      expect(engine.getExperimentalFeatures()).toMatchObject({ metrics: false, editDocumentsByFunction: true });
      await engine.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('dumps carry the flags set through PATCH (as experimental-features.json) and imports restore them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'search-features-dump-'));
    try {
      const engine = await Engine.open({ dbPath: join(dir, 'a'), logLevel: 'off', instanceFeatures: { metrics: true } });
      engine.updateExperimentalFeatures({ containsFilter: true, getTaskDocumentsRoute: true });
      await writeDump(engineDumpSource(engine, { dbVersion: '1.0.0', auth: null }), join(dir, 'x.dump'));
      await engine.close();
      await importDump(join(dir, 'x.dump'), join(dir, 'b'));
      const imported = await Engine.open({ dbPath: join(dir, 'b'), logLevel: 'off' });
      // the serve option was this run's, not the instance's: it does not travel
      expect(imported.getExperimentalFeatures()).toMatchObject({ containsFilter: true, getTaskDocumentsRoute: true, metrics: false });
      await imported.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('search threads', () => {
  test('a search answered in a search thread sees a PATCH at once', async () => {
    const threaded = await startHarness({}, { searchThreads: 1 });
    try {
      const added = await threaded.request('POST', '/indexes/movies/documents', { json: movies().slice(0, 20) });
      await threaded.wait(added.body.taskUid);
      const settings = await threaded.request('PATCH', '/indexes/movies/settings', { json: { filterableAttributes: ['title'] } });
      await threaded.wait(settings.body.taskUid);
      const search = () => threaded.request('POST', '/indexes/movies/search', { json: { filter: 'title CONTAINS "a"' } });
      expectErrorShape((await search()).body, 'feature_not_enabled');
      await threaded.request('PATCH', '/experimental-features', { json: { containsFilter: true } });
      expect((await search()).status).toBe(200);
      await threaded.request('PATCH', '/experimental-features', { json: { containsFilter: false } });
      expectErrorShape((await search()).body, 'feature_not_enabled');
    } finally {
      await threaded.stop();
    }
  });
});
