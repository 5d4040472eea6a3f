/**
 * Property: a key or tenant token limited to some indexes never gets data or metadata of another
 * index, wherever a request names it (path, multi-search queries, federation `facetsByIndex`,
 * swaps, task and batch filters, stats, lists), and a forbidden index answers exactly as an index
 * that does not exist: the answer does not tell which indexes exist.
 */
import fc from 'fast-check';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startSecured, type SecuredHarness } from './harness.js';

const MASTER = 'index-boundary-master-key-0123456789';
const master = { key: MASTER };
/** What only the forbidden index holds: none of it may reach a key that does not cover it. */
const SECRET_MARKERS = ['SECRETDATA', 'secretfacet', 'secretid'];

let h: SecuredHarness;
beforeAll(async () => {
  h = await startSecured({ masterKey: MASTER, realSearch: true });
  const seed = async (uid: string, docs: unknown[], settings: unknown) => {
    await h.engine.waitForTask((await h.request('POST', `/indexes/${uid}/documents`, { ...master, json: docs })).body.taskUid);
    await h.engine.waitForTask((await h.request('PATCH', `/indexes/${uid}/settings`, { ...master, json: settings })).body.taskUid);
  };
  await seed('movies', [{ id: 1, title: 'alien', genre: 'scifi' }, { id: 2, title: 'heat', genre: 'crime' }], { filterableAttributes: ['genre'] });
  await seed('other', [{ id: 1, title: 'alien other' }], { filterableAttributes: ['title'] });
  await seed('secret', [{ secretid: 1, title: 'alien SECRETDATA', secretfacet: 'SECRETDATA' }], { filterableAttributes: ['secretfacet'] });
}, 120_000);
afterAll(() => h.stop());

// Patterns a generated key may hold: never `secret`, never `nowhere` (the unknown index).
const keyIndexes = fc.uniqueArray(fc.constantFrom('movies', 'other', 'ghost', 'mov*', 'oth*'), { minLength: 1, maxLength: 3 });
const keyActions = fc.uniqueArray(
  fc.constantFrom('search', 'documents.get', 'indexes.get', 'settings.get', 'stats.get', 'tasks.get', 'indexes.swap', 'tasks.cancel', 'tasks.delete', '*'),
  { minLength: 1, maxLength: 4 },
);
const credential = fc.record({
  indexes: keyIndexes,
  actions: keyActions,
  // a tenant token derived from the key, with search rules of its own (possibly wider than the key)
  tenantRules: fc.option(fc.uniqueArray(fc.constantFrom('movies', 'other', 'secret', '*'), { minLength: 1, maxLength: 3 }), { nil: null }),
});

type Req = { method: string; path: string; json?: unknown };
/** Requests that name `target` somewhere; `target` is `secret` (forbidden) or `nowhere` (unknown). */
const requestNaming: Array<(target: string, allowed: string) => Req> = [
  (t) => ({ method: 'POST', path: `/indexes/${t}/search`, json: { q: 'alien', facets: ['*'] } }),
  (t) => ({ method: 'GET', path: `/indexes/${t}/search?q=alien` }),
  (t) => ({ method: 'POST', path: `/indexes/${t}/facet-search`, json: { facetName: 'secretfacet' } }),
  (t) => ({ method: 'POST', path: `/indexes/${t}/similar`, json: { id: 1 } }),
  (t) => ({ method: 'GET', path: `/indexes/${t}/documents` }),
  (t) => ({ method: 'GET', path: `/indexes/${t}/documents/1` }),
  (t) => ({ method: 'POST', path: `/indexes/${t}/documents/fetch`, json: {} }),
  (t) => ({ method: 'GET', path: `/indexes/${t}` }),
  (t) => ({ method: 'GET', path: `/indexes/${t}/settings` }),
  (t) => ({ method: 'GET', path: `/indexes/${t}/settings/filterable-attributes` }),
  (t) => ({ method: 'GET', path: `/indexes/${t}/stats` }),
  (t, a) => ({ method: 'POST', path: '/multi-search', json: { queries: [{ indexUid: a, q: 'alien' }, { indexUid: t, q: 'alien' }] } }),
  (t, a) => ({ method: 'POST', path: '/multi-search', json: { federation: {}, queries: [{ indexUid: a }, { indexUid: t, q: 'alien' }] } }),
  (t, a) => ({ method: 'POST', path: '/multi-search', json: { federation: { facetsByIndex: { [t]: ['secretfacet'] } }, queries: [{ indexUid: a }] } }),
  (t, a) => ({ method: 'POST', path: '/multi-search', json: { federation: { facetsByIndex: { [t]: ['x'] }, mergeFacets: {} }, queries: [{ indexUid: a }] } }),
  (t, a) => ({ method: 'POST', path: '/swap-indexes', json: [{ indexes: [a, t] }] }),
  (t) => ({ method: 'GET', path: `/tasks?indexUids=${t}` }),
  (t) => ({ method: 'GET', path: `/batches?indexUids=${t}` }),
  (t) => ({ method: 'POST', path: `/tasks/cancel?indexUids=${t}` }),
  (t) => ({ method: 'DELETE', path: `/tasks?indexUids=${t}&statuses=enqueued` }),
];
/** Requests that name no index: lists and stats must leave the forbidden index out. */
const requestsNamingNone: Req[] = [
  { method: 'GET', path: '/indexes' },
  { method: 'GET', path: '/stats' },
  { method: 'GET', path: '/tasks?limit=1000' },
  { method: 'GET', path: '/batches?limit=1000' },
  { method: 'POST', path: '/multi-search', json: { queries: [] } },
];

let keyCount = 0;
async function issue(c: { indexes: string[]; actions: string[]; tenantRules: string[] | null }): Promise<string> {
  const created = await h.request('POST', '/keys', { ...master, json: { name: `k${keyCount++}`, actions: c.actions, indexes: c.indexes, expiresAt: null } });
  expect(created.status, created.text).toBe(201);
  if (!c.tenantRules) return created.body.key;
  // rules that name the forbidden index name the unknown one too, so that both stand alike in the token
  const rules = c.tenantRules.includes('secret') ? [...c.tenantRules, 'nowhere'] : c.tenantRules;
  return new SignJWT({ apiKeyUid: created.body.uid, searchRules: rules })
    .setProtectedHeader({ alg: 'HS256' })
    .sign(new TextEncoder().encode(created.body.key));
}

/** The answer with the target's name and timings taken out, for comparing two answers. */
function comparable(reply: { status: number; text: string }, target: string): string {
  return `${reply.status} ${reply.text.replaceAll(target, '<target>').replace(/"processingTimeMs":\d+/g, '')}`;
}

function leaks(text: string): string[] {
  return SECRET_MARKERS.filter((m) => text.includes(m));
}

test('keys and tenant tokens never see an index outside their scope; forbidden and unknown answer alike', async () => {
  let refused = 0;
  let served = 0;
  await fc.assert(
    fc.asyncProperty(credential, fc.nat({ max: requestNaming.length - 1 }), fc.constantFrom('movies', 'other'), async (c, pick, allowed) => {
      const key = await issue(c);
      const make = requestNaming[pick]!;
      const forbidden = make('secret', allowed);
      const unknown = make('nowhere', allowed);
      const a = await h.request(forbidden.method, forbidden.path, { key, json: forbidden.json });
      const b = await h.request(unknown.method, unknown.path, { key, json: unknown.json });
      expect(a.status, `${forbidden.method} ${forbidden.path}: ${a.text}`).toBeLessThan(500);
      expect(leaks(a.text), `${JSON.stringify(c)} ${forbidden.method} ${forbidden.path} ${JSON.stringify(forbidden.json)}: ${a.text}`).toEqual([]);
      expect(comparable(a, 'secret'), `${JSON.stringify(c)} ${forbidden.method} ${forbidden.path}`).toBe(comparable(b, 'nowhere'));
      if (a.status >= 400) refused++;
      else served++;
      for (const r of requestsNamingNone) {
        const reply = await h.request(r.method, r.path, { key, json: r.json });
        expect(reply.status).toBeLessThan(500);
        expect(leaks(reply.text)).toEqual([]);
        if (reply.status === 200) expect(reply.text.includes('"secret"'), `${JSON.stringify(c)} ${r.path}: ${reply.text.slice(0, 300)}`).toBe(false);
      }
    }),
    { numRuns: 120, seed: Number(process.env.FUZZ_SEED ?? 0xb0a7d) },
  );
  expect(refused).toBeGreaterThan(50);
  // the master key still sees it all: the markers are really there to be leaked
  const all = await h.request('POST', '/multi-search', { ...master, json: { federation: { facetsByIndex: { secret: ['secretfacet'] } }, queries: [{ indexUid: 'secret', q: 'alien' }] } });
  expect(all.status).toBe(200);
  expect(leaks(all.text)).toEqual(SECRET_MARKERS);
  expect(served).toBeGreaterThan(0); // task and batch lists filtered on it answer 200, empty
}, 240_000);
