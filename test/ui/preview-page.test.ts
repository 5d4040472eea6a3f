/**
 * The search preview page in a real browser: served at `/` by a real server, built by
 * `npm run build` (the test setup builds it too), searching with instant-meilisearch. Films of
 * 1993 from the fixtures, with the offline local embedder, so that the semantic slider changes
 * what comes first. Screenshots go to test-artifacts/preview/ (gitignored).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadPreviewPage, previewPageRoutes } from '../../src/http/routes/preview-page.js';
import type { Document } from '../../src/engine/types.js';
import { books, movies } from '../data.js';
import { startSecured, type SecuredHarness } from '../auth/harness.js';
import { startHarness, type Harness } from '../http/harness.js';
import { launchBrowser, type Browser } from './browser.js';

const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/preview/', import.meta.url));
const PARAPHRASE = 'a weather reporter stuck reliving the same date again and again';

/** Films of 1993 with an extract: the first 60, and Groundhog Day wherever it is. */
function films(): Document[] {
  const of1993 = movies().filter((m) => m.extract && m.year === 1993);
  const picked = of1993.slice(0, 60);
  const target = of1993.find((m) => m.title === 'Groundhog Day')!;
  if (!picked.includes(target)) picked.push(target);
  return picked.map(({ id, title, year, genres, extract }) => ({ id, title, year, genres, extract }));
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** The number in the stats line ("61 results found in 3ms"). */
async function hitCount(page: Page): Promise<number> {
  const text = (await page.locator('.ais-Stats-text').textContent()) ?? '';
  const match = /([\d,]+) result/.exec(text);
  if (!match) throw new Error(`no hit count in \`${text}\``);
  return Number(match[1]!.replace(/,/g, ''));
}

/** expect.poll with room for a loaded machine (its default gives up after 1 s). */
const poll = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 20_000 });

const firstTitle = (page: Page) => page.locator('.ais-Hits-item').first().locator('.hit-title');

describe('the search preview page in Chromium', () => {
  let h: Harness;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    // first: without a browser the test fails at once, before the indexing
    browser = await launchBrowser();
    const assets = loadPreviewPage();
    if (!assets) throw new Error('dist/preview is missing: the page is built by `npm run build` (node web/build.mjs)');
    h = await startHarness({ routes: [previewPageRoutes(assets)] });
    const wait = async (p: Promise<{ status: number; body: any }>) => {
      const task = await h.wait((await p).body.taskUid);
      expect(task.error ?? null).toBeNull();
    };
    await wait(h.request('POST', '/indexes', { json: { uid: 'books', primaryKey: 'id' } }));
    await wait(h.request('POST', '/indexes/books/documents', { json: books() }));
    await wait(h.request('POST', '/indexes/movies/documents?primaryKey=id', { json: films() }));
    await wait(
      h.request('PATCH', '/indexes/movies/settings', {
        json: {
          filterableAttributes: ['genres', 'year'],
          embedders: { local: { source: 'huggingFace', documentTemplate: 'A film titled {{doc.title}}. {{doc.extract}}', documentTemplateMaxBytes: 250 } },
        },
      }),
    );
    page = await browser.context.newPage();
    // script errors, failed requests, Content-Security-Policy refusals: none is expected here
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => message.type() === 'error' && problems.push(`console: ${message.text()} (${message.location().url})`));
  }, 300_000);

  afterEach(() => {
    expect(problems.splice(0)).toEqual([]);
  });

  afterAll(async () => {
    await browser?.close();
    await h?.stop();
  });

  it('lists the indexes and searches the picked one as you type, typo included, with the match highlighted', async () => {
    await page.goto(`${h.url}/`);
    const picker = page.locator('#index-picker');
    await poll(() => picker.locator('option').allTextContents()).toEqual(['books', 'movies']);
    // no key prompt on a server without a master key
    expect(await page.locator('#key-prompt').isVisible()).toBe(false);
    await picker.selectOption('movies');
    await poll(() => hitCount(page)).toBe(films().length);

    await page.locator('.ais-SearchBox-input').pressSequentially('grundhog', { delay: 30 });
    await poll(() => firstTitle(page).textContent()).toBe('Groundhog Day');
    expect(await firstTitle(page).locator('mark').allTextContents()).toEqual(['Groundhog']);
    // the extract is cropped around its matches
    const extract = page.locator('.ais-Hits-item').first().locator('.field', { hasText: 'extract' }).locator('dd');
    expect((await extract.textContent())!.length).toBeLessThan(films().find((f) => f.title === 'Groundhog Day')!.extract!.toString().length);
    await shot(page, '1-typo-query');
  });

  it('narrows the hits with a facet value of a filterable attribute', async () => {
    await page.locator('.ais-SearchBox-input').fill('');
    await poll(() => hitCount(page)).toBe(films().length);
    const genres = page.locator('.facet[data-attribute="genres"]');
    const comedy = genres.locator('.ais-RefinementList-item', { hasText: 'Comedy' });
    const expected = films().filter((f) => (f.genres as string[]).includes('Comedy')).length;
    expect(Number(await comedy.locator('.ais-RefinementList-count').textContent())).toBe(expected);
    await comedy.locator('input').click();
    await poll(() => hitCount(page)).toBe(expected);
    expect(expected).toBeLessThan(films().length);
    await shot(page, '2-facet');
    await comedy.locator('input').click();
    await poll(() => hitCount(page)).toBe(films().length);
  });

  it('ranks the film first for a paraphrase once the semanticRatio slider is turned up', async () => {
    await expect(page.locator('#semantic').isVisible()).resolves.toBe(true);
    await page.locator('.ais-SearchBox-input').fill(PARAPHRASE);
    await poll(() => page.locator('.ais-Hits-item').count()).toBeGreaterThan(0);
    expect(await firstTitle(page).textContent()).not.toBe('Groundhog Day');
    await shot(page, '3-keyword-only');

    const slider = page.locator('#semantic-ratio');
    await slider.focus();
    for (let i = 0; i < 7; i++) await slider.press('ArrowRight');
    await poll(() => page.locator('#semantic-ratio-value').textContent()).toBe('0.7');
    await poll(() => firstTitle(page).textContent()).toBe('Groundhog Day');
    await shot(page, '4-semantic');
  }, 60_000);

  it('shows ranking scores on demand and the whole document in the document view', async () => {
    expect(await page.locator('.hit .score').count()).toBe(0);
    await page.locator('#show-scores').check();
    await poll(() => page.locator('.hit .score').count()).toBeGreaterThan(0);
    const score = Number(await page.locator('.hit .score').first().textContent());
    expect(score).toBeGreaterThan(0);
    expect(score).toBeLessThanOrEqual(1);

    await page.locator('.ais-Hits-item').first().locator('.open-document').click();
    const dialog = page.locator('#document-view');
    await poll(() => dialog.isVisible()).toBe(true);
    await poll(async () => JSON.parse((await dialog.locator('#document-json').textContent()) ?? 'null')?.title).toBe('Groundhog Day');
    await shot(page, '5-document');
    await page.locator('#document-close').click();
  });
});

describe('the preview page on a server with a master key', () => {
  const MASTER = 'a-master-key-of-sixteen-bytes-or-more';
  let h: SecuredHarness;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    browser = await launchBrowser();
    h = await startSecured({ masterKey: MASTER, realSearch: true, routes: () => [previewPageRoutes(loadPreviewPage())] });
    const created = await h.request('POST', '/indexes/books/documents', { key: MASTER, json: books().slice(0, 30) });
    await h.engine.waitForTask(created.body.taskUid, { timeoutMs: 60_000 });
    page = await browser.context.newPage();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await h?.stop();
  });

  it('asks for an API key, keeps it in local storage and searches with it after a reload', async () => {
    const key = (await h.request('POST', '/keys', { key: MASTER, json: { actions: ['indexes.get', 'settings.get', 'search', 'documents.get'], indexes: ['*'], expiresAt: null } })).body.key as string;
    await page.goto(`${h.url}/`);
    const prompt = page.locator('#key-prompt');
    await poll(() => prompt.isVisible()).toBe(true);
    expect(await page.locator('#key-prompt-reason').textContent()).toContain('Authorization header is missing');

    await page.locator('#key-input').fill('not-a-key');
    await page.locator('#key-prompt button[type="submit"]').click();
    await poll(() => page.locator('#key-prompt-reason').textContent()).toContain('The provided API key is invalid');
    expect(await page.locator('#app').isVisible()).toBe(false);

    await page.locator('#key-input').fill(key);
    await page.locator('#key-prompt button[type="submit"]').click();
    await poll(() => prompt.isVisible()).toBe(false);
    await poll(() => hitCount(page)).toBe(30);
    expect(await page.evaluate(() => localStorage.getItem('search-preview:api-key'))).toBe(key);
    await shot(page, '6-api-key');

    await page.reload();
    await poll(() => hitCount(page)).toBe(30);
    expect(await prompt.isVisible()).toBe(false);
  });
});
