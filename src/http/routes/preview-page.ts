/**
 * `GET /`: the search preview page (built into `dist/preview` by `web/build.mjs`), and the files
 * it loads, served from memory. As in the reference, the page is off in production and then `/`
 * only says that the server runs; `--no-preview-page` turns it off in development too.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { HttpEngine } from '../engine-port.js';
import { addRoute } from '../route.js';
import { packageRoot } from '../version.js';
import type { RouteModule } from './index.js';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

interface Asset {
  body: Buffer;
  contentType: string;
}

/** Where `npm run build` writes the page. */
export function previewPageDir(): string {
  return join(packageRoot(), 'dist', 'preview');
}

/** The built page's files by name, or null when the page was not built. */
export function loadPreviewPage(dir: string = previewPageDir()): Map<string, Asset> | null {
  if (!existsSync(join(dir, 'index.html'))) return null;
  const assets = new Map<string, Asset>();
  for (const name of readdirSync(dir)) {
    const contentType = CONTENT_TYPES[extname(name)];
    if (contentType) assets.set(name, { body: readFileSync(join(dir, name)), contentType });
  }
  return assets;
}

/**
 * The page loads its own files and talks to this server only; InstantSearch sets inline styles.
 * Nothing else may run in it, nor may another site frame it.
 */
const PAGE_POLICY = "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** The reference's answer at `/` when its dashboard is off; kept for clients that probe it. */
const RUNNING = { status: 'Meilisearch is running' };

/**
 * `assets` null: `/` answers the running status. Otherwise `/` is the page and each of its
 * files is served at `/<name>` (public, like `/health`: the page holds no data, its searches
 * carry the user's key).
 */
export function previewPageRoutes(assets: Map<string, Asset> | null): RouteModule {
  return (app: FastifyInstance, _engine: HttpEngine) => {
    if (!assets) {
      addRoute(app, { method: 'GET', url: '/', action: null, handler: () => RUNNING });
      return;
    }
    for (const [name, asset] of assets) {
      addRoute(app, {
        method: 'GET',
        url: name === 'index.html' ? '/' : `/${name}`,
        action: null,
        handler: ({ reply }) => {
          // the page changes only with the package: let browsers revalidate rather than guess
          reply.type(asset.contentType).header('cache-control', 'no-cache').header('x-content-type-options', 'nosniff');
          if (name === 'index.html') reply.header('content-security-policy', PAGE_POLICY);
          return asset.body;
        },
      });
    }
  };
}
