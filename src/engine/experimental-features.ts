/**
 * Experimental features (`GET/PATCH /experimental-features`): flags that gate features the
 * reference marks experimental, each refused with `feature_not_enabled` while off.
 *
 * The flags live in the task store's environment, so that every thread (serving, write, search
 * threads) reads the same values from its own snapshot and they survive restarts and snapshots.
 * Two records: `runtime`, what PATCH set; `instance`, what the serve options turned on for this
 * run (`--experimental-enable-metrics`...), rewritten at each start so that dropping the option
 * turns the feature off again. A flag is on when either record says so, as in the reference.
 */
import type { Database, RootDatabase } from 'lmdb';
import { SearchError } from './errors.js';

/** Every flag, in the order the reference lists them in its responses. */
export const FEATURE_NAMES = [
  'metrics',
  'logsRoute',
  'editDocumentsByFunction',
  'containsFilter',
  'network',
  'getTaskDocumentsRoute',
  'taskQueueCompactionRoute',
  'compositeEmbedders',
  'chatCompletions',
  'multimodal',
  'vectorStoreSetting',
  'dynamicSearchRules',
  'foreignKeys',
  'renderRoute',
] as const;

export type FeatureName = (typeof FEATURE_NAMES)[number];
export type ExperimentalFeatures = Record<FeatureName, boolean>;

/** How the reference names each feature in its `feature_not_enabled` message, and where it is discussed. */
const DESCRIPTIONS: Record<FeatureName, { label: string; link: string }> = {
  metrics: { label: 'metrics', link: 'https://github.com/meilisearch/product/discussions/625' },
  logsRoute: { label: 'logs route', link: 'https://github.com/orgs/meilisearch/discussions/721' },
  editDocumentsByFunction: { label: 'edit documents by function', link: 'https://github.com/orgs/meilisearch/discussions/762' },
  containsFilter: { label: 'contains filter', link: 'https://github.com/orgs/meilisearch/discussions/763' },
  network: { label: 'network', link: 'https://github.com/orgs/meilisearch/discussions/805' },
  getTaskDocumentsRoute: { label: 'get task documents route', link: 'https://github.com/orgs/meilisearch/discussions/808' },
  taskQueueCompactionRoute: { label: 'task queue compaction route', link: 'https://github.com/orgs/meilisearch/discussions/883' },
  compositeEmbedders: { label: 'composite embedders', link: 'https://github.com/orgs/meilisearch/discussions/816' },
  chatCompletions: { label: 'chat completions', link: 'https://github.com/orgs/meilisearch/discussions/835' },
  multimodal: { label: 'multimodal', link: 'https://github.com/orgs/meilisearch/discussions/846' },
  vectorStoreSetting: { label: 'vector store setting', link: 'https://github.com/orgs/meilisearch/discussions/860' },
  dynamicSearchRules: { label: 'dynamic search rules', link: 'https://github.com/orgs/meilisearch/discussions/884' },
  foreignKeys: { label: 'foreign_keys', link: 'https://github.com/orgs/meilisearch/discussions/873' },
  renderRoute: { label: 'render route', link: 'https://github.com/orgs/meilisearch/discussions/888' },
};

/** What is refused while `renderRoute` is off (the reference gates `POST /render-template` on it). */
export const RENDER_ROUTE_ACTION = 'Using the render template route';

/** What the reference says is refused while `taskQueueCompactionRoute` is off. */
export const TASK_QUEUE_COMPACTION_ACTION = 'Using the /tasks/compact route';

/** What the reference says is refused while `getTaskDocumentsRoute` is off. */
export const TASK_DOCUMENTS_ACTION = 'Getting the documents of an enqueued task';

export function featureNotEnabled(name: FeatureName, disabledAction: string): SearchError {
  const { label, link } = DESCRIPTIONS[name];
  return new SearchError('feature_not_enabled', `${disabledAction} requires enabling the \`${label}\` experimental feature. See ${link}`);
}

export function allDisabled(): ExperimentalFeatures {
  return Object.fromEntries(FEATURE_NAMES.map((name) => [name, false])) as ExperimentalFeatures;
}

/** Keep only known flags with boolean values (a record written by another version may hold others). */
function known(record: unknown): Partial<ExperimentalFeatures> {
  const out: Partial<ExperimentalFeatures> = {};
  if (record === null || typeof record !== 'object') return out;
  for (const name of FEATURE_NAMES) {
    const value = (record as Record<string, unknown>)[name];
    if (typeof value === 'boolean') out[name] = value;
  }
  return out;
}

/** Reads and writes the flags; anything holding the task store's environment can make one. */
export class FeatureStore {
  private readonly db: Database<unknown, string>;

  constructor(private readonly env: RootDatabase) {
    this.db = env.openDB({ name: 'experimental-features', encoding: 'msgpack' });
  }

  /** Record what the serve options turned on for this run (replacing the previous run's). */
  setInstance(features: Partial<ExperimentalFeatures>): void {
    this.env.transactionSync(() => this.db.putSync('instance', known(features)));
  }

  /** The flags as set by PATCH, without the serve options (what dumps carry). */
  runtime(): ExperimentalFeatures {
    return { ...allDisabled(), ...known(this.db.get('runtime')) };
  }

  /** The effective flags: on when PATCH or a serve option turned them on. */
  get(): ExperimentalFeatures {
    const instance = known(this.db.get('instance'));
    const out = this.runtime();
    for (const name of FEATURE_NAMES) out[name] = out[name] || instance[name] === true;
    return out;
  }

  enabled(name: FeatureName): boolean {
    return this.get()[name];
  }

  /** Throw the reference's `feature_not_enabled` error unless the flag is on. */
  require(name: FeatureName, disabledAction: string): void {
    if (!this.enabled(name)) throw featureNotEnabled(name, disabledAction);
  }

  /** Apply a PATCH (absent flags keep their value) and return the effective flags. */
  update(patch: Partial<ExperimentalFeatures>): ExperimentalFeatures {
    this.env.transactionSync(() => this.db.putSync('runtime', { ...this.runtime(), ...known(patch) }));
    return this.get();
  }

  /** Replace the runtime flags (dump import). */
  replace(features: Partial<ExperimentalFeatures>): void {
    this.env.transactionSync(() => this.db.putSync('runtime', { ...allDisabled(), ...known(features) }));
  }
}

/**
 * The experimental settings a settings patch uses, refused while their flag is off (checked when
 * the update is registered, before the task exists, as the reference does).
 */
export function checkSettingsFeatures(features: FeatureStore, body: unknown): void {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return;
  const settings = body as Record<string, unknown>;
  const embedders = settings.embedders;
  if (embedders !== null && typeof embedders === 'object' && !Array.isArray(embedders)) {
    for (const embedder of Object.values(embedders as Record<string, unknown>)) {
      if (embedder === null || typeof embedder !== 'object') continue;
      const e = embedder as Record<string, unknown>;
      if (e.source === 'composite') features.require('compositeEmbedders', 'using `"composite"` as source');
      if (e.searchEmbedder !== undefined && e.searchEmbedder !== null) features.require('compositeEmbedders', 'setting `searchEmbedder`');
      if (e.indexingEmbedder !== undefined && e.indexingEmbedder !== null) features.require('compositeEmbedders', 'setting `indexingEmbedder`');
      if (e.indexingFragments !== undefined && e.indexingFragments !== null) features.require('multimodal', 'setting `indexingFragments`');
      if (e.searchFragments !== undefined && e.searchFragments !== null) features.require('multimodal', 'setting `searchFragments`');
    }
  }
  if (settings.chat !== undefined && settings.chat !== null) features.require('chatCompletions', 'setting `chat` in the index settings');
  if (settings.vectorStore !== undefined && settings.vectorStore !== null)
    features.require('vectorStoreSetting', 'setting `vectorStore` in the index settings');
  // the default (no foreign key) is what every settings object read back carries: sending it back is no use of the feature
  if (Array.isArray(settings.foreignKeys) ? settings.foreignKeys.length > 0 : settings.foreignKeys !== undefined && settings.foreignKeys !== null)
    features.require('foreignKeys', 'setting `foreignKeys` in the index settings');
}
