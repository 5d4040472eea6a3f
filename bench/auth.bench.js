/**
 * What security costs, measured against the same server without it in the same run:
 *   1. requests/s on `GET /version` (a trivial route, so the guard's share shows): no guard (the
 *      peer), the master key, an API key scoped by pattern; and the guard alone per second for an
 *      API key and a tenant token (verified once, then remembered);
 *   2. task throughput with two webhooks, one live and one dead receiver (connection refused,
 *      retried in the background), against no webhook at all: the queue must not slow down.
 * Figures are ratios to the peer.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 3000);
const CONCURRENCY = 8;
const BATCHES = Number(process.env.BENCH_BATCHES ?? 40);
const MASTER = 'bench-master-key-0123456789abcdef';

const { Engine } = await import('../dist/src/index.js');
const { createServer } = await import('../dist/src/http/server.js');
const { createSecurity } = await import('../dist/src/http/auth.js');
const { SignJWT } = await import('jose');

async function withServer(secured, fn, extra = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-auth-'));
  const dbPath = join(dir, 'data.ms');
  const engine = await Engine.open({ dbPath, logLevel: 'off' });
  const security = secured
    ? createSecurity({ dbPath, env: 'development', masterKey: MASTER, scheduler: engine.scheduler, log: () => {}, ...extra })
    : null;
  const server = createServer(engine, security ? { guard: security.guard, routes: security.routes } : {});
  const { url } = await server.listen('127.0.0.1:0');
  try {
    return await fn({ engine, security, url });
  } finally {
    await server.close();
    await security?.close();
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function hammer(url, headers) {
  let next = 0;
  const worker = async () => {
    while (next++ < REQUESTS) {
      const res = await fetch(url, { headers });
      if (res.status !== 200) throw new Error(`${url}: ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return (REQUESTS / (performance.now() - start)) * 1000;
}

async function seed(engine) {
  const t = await engine.addDocuments('movies', [{ id: 1, title: 'x' }], { method: 'replace' });
  await engine.waitForTask(t.taskUid);
}

const route = '/version';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const peerRounds = [];
const masterRounds = [];
const keyRounds = [];
let guardAlone;
for (let round = 0; round < ROUNDS; round++) {
peerRounds.push(await withServer(false, async ({ engine, url }) => {
  await seed(engine);
  await hammer(url + route, {}); // warm-up
  return hammer(url + route, {});
}));
const secured = await withServer(true, async ({ engine, security, url }) => {
  await seed(engine);
  const key = security.auth.createKey({ actions: ['version', 'search'], indexes: ['mov*'], expiresAt: null });
  const token = await new SignJWT({ apiKeyUid: key.uid, searchRules: { 'mov*': { filter: 'id > 0' } } })
    .setProtectedHeader({ alg: 'HS256' })
    .sign(new TextEncoder().encode(key.key));
  await hammer(url + route, { authorization: `Bearer ${MASTER}` }); // warm-up
  const master = await hammer(url + route, { authorization: `Bearer ${MASTER}` });
  const apiKey = await hammer(url + route, { authorization: `Bearer ${key.key}` });
  // the token authenticates on search routes only; measure the guard itself on the same route shape
  const tokenAuth = async () => {
    const start = performance.now();
    for (let i = 0; i < REQUESTS; i++)
      await security.auth.authenticate({ header: `Bearer ${token}`, action: 'search', indexUid: 'movies' });
    return (REQUESTS / (performance.now() - start)) * 1000;
  };
  const keyAuth = async () => {
    const start = performance.now();
    for (let i = 0; i < REQUESTS; i++)
      await security.auth.authenticate({ header: `Bearer ${key.key}`, action: 'search', indexUid: 'movies' });
    return (REQUESTS / (performance.now() - start)) * 1000;
  };
  return { master, apiKey, tokenPerSec: await tokenAuth(), keyPerSec: await keyAuth() };
});
masterRounds.push(secured.master);
keyRounds.push(secured.apiKey);
guardAlone = secured;
}
const peer = median(peerRounds);
const secured = { ...guardAlone, master: median(masterRounds), apiKey: median(keyRounds) };

console.log(`auth: GET ${route}, ${REQUESTS} requests, concurrency ${CONCURRENCY}, median of ${ROUNDS} rounds`);
console.log(`  no guard (peer)   ${peer.toFixed(0)} req/s`);
console.log(`  master key        ${secured.master.toFixed(0)} req/s  (${(secured.master / peer).toFixed(2)}x peer)`);
console.log(`  scoped API key    ${secured.apiKey.toFixed(0)} req/s  (${(secured.apiKey / peer).toFixed(2)}x peer)`);
console.log(`  guard alone: API key ${secured.keyPerSec.toFixed(0)}/s, tenant token ${secured.tokenPerSec.toFixed(0)}/s (${(secured.tokenPerSec / peer).toFixed(1)}x the peer's request rate)`);

// --- webhooks and the queue --------------------------------------------------------------------

async function queueRate(hooks) {
  const receivers = [];
  let extra = {};
  if (hooks) {
    const live = createHttpServer((req, res) => req.resume().on('end', () => res.end()));
    await new Promise((r) => live.listen(0, '127.0.0.1', r));
    receivers.push(live);
    extra = { taskWebhookUrl: `http://127.0.0.1:${live.address().port}/`, allowedIpNetworks: '127.0.0.0/8' };
  }
  try {
    return await withServer(hooks, async ({ engine, security }) => {
      // a dead receiver too: connection refused, retried with backoff in the background
      if (hooks) security.webhooks.create({ url: 'http://127.0.0.1:9/' });
      const start = performance.now();
      for (let b = 0; b < BATCHES; b++) {
        const t = await engine.addDocuments('movies', [{ id: b, title: `t${b}` }], { method: 'replace' });
        await engine.waitForTask(t.taskUid, { intervalMs: 1 });
      }
      return (BATCHES / (performance.now() - start)) * 1000;
    }, extra);
  } finally {
    for (const s of receivers) await new Promise((r) => s.close(r));
  }
}

const withoutRounds = [];
const withRounds = [];
for (let round = 0; round < ROUNDS; round++) {
  withoutRounds.push(await queueRate(false));
  withRounds.push(await queueRate(true));
}
const withoutHooks = median(withoutRounds);
const withHooks = median(withRounds);
console.log(`webhooks: ${BATCHES} sequential one-task batches, median of ${ROUNDS} rounds`);
console.log(`  no webhook (peer)             ${withoutHooks.toFixed(1)} batches/s`);
console.log(`  live + dead receiver webhooks ${withHooks.toFixed(1)} batches/s  (${(withHooks / withoutHooks).toFixed(2)}x peer)`);
