/**
 * Headless Chromium for the page tests: the system browser (Debian package `chromium`), driven
 * by playwright-core, which downloads no browser. The network is closed: the flags below stop
 * Chromium's own lookups (without them it hangs). A missing browser is an error, never a skip.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM = process.env.SEARCH_TEST_CHROMIUM ?? '/usr/bin/chromium';

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`Chromium is not installed at ${CHROMIUM}: run \`apt-get install -y chromium\` (.ci/run does) or set SEARCH_TEST_CHROMIUM.`);
  // a new, empty profile each run (passed as --user-data-dir by playwright)
  const profile = mkdtempSync(join(tmpdir(), 'search-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 900 },
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
