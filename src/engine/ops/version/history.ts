/**
 * The storage format's version history. `VERSION` in the database directory names the format
 * that wrote it; this table says what changed between formats and how to move a database
 * forward (a dumpless upgrade) without re-indexing.
 *
 *   0.9.0  An index's field distribution (`fieldDistribution` in index stats) was computed at
 *          read time by scanning every document: O(documents) for every stats request.
 *   1.0.0  The distribution is kept in the index's `main` database and adjusted by each batch.
 *          Batches only apply deltas, so a database coming from 0.9.0 needs the baseline
 *          computed once from its documents: that is the upgrade step below.
 *   1.1.0  Keyword postings per word: one record per word holds its id and its posting lists per
 *          field and per first-position bucket (`kw-word-parts`), and ids map back to words in
 *          blocks (`kw-id-blocks`), instead of one key per (word, field), per (word, bucket) and
 *          per id: a third of the keys, which made indexing 1.3x faster. The step converts the
 *          old databases into the new ones (the old ones stay untouched until the new version
 *          is committed, then they are dropped).
 *   1.2.0  Each document's keyword entry (its word ids and positions, read for proximity and
 *          exactness, and by deletions) with ids and positions as narrow as each field needs, in
 *          `kw-entries` (see entry.ts), instead of u32 pairs in `kw-docs`: 55 instead of 149 MiB
 *          at 200k documents, and read in place by the ranking loop. The step re-encodes every
 *          entry into the new database; the old one is dropped once the version is committed.
 *          Also new in 1.2.0: the tail twins of the posting databases (`kw-*-tail`, see
 *          tails.ts), which a 1.1.0 database has no need of: it starts with none.
 *   1.3.0  Pair postings (`kw-pairs`) also for a short second word after a long first word
 *          ("king the"), and kw-meta `pairPostings` says which pairs every document has (see
 *          layout.ts). Nothing is converted: an index from 1.2.0 keeps `true` there and reads
 *          those pairs from its documents until it is rebuilt. The version changes so that a
 *          1.2.0 binary, which would write documents without those pairs into an index that
 *          says it has them, refuses the database instead.
 *   1.4.0  Records of frequent prefixes (`kw-prefix-parts`, see PREFIX_RECORD_MIN_WORDS in
 *          layout.ts): per field and per first-position bucket, as a word's, so that the rules
 *          rank a short prefix's matches by where they are. The step builds them from the word
 *          records (a fill of new databases, which a rollback empties); every batch keeps them
 *          from then on, which a 1.3.0 binary would not.
 */
import type { IndexStore } from '../../index/store.js';
import { DB_FORMAT_VERSION } from '../../store/format.js';
import { CONVERTED_DATABASES, CONVERTED_ENTRIES_DATABASE, convertLegacyEntries, convertLegacyKeywordLayout, dropLegacyEntries, dropLegacyKeywordLayout } from '../../search/keyword/legacy.js';
import { fillPrefixRecords } from '../../search/keyword/extension.js';
import { PREFIX_PARTS_DB } from '../../search/keyword/layout.js';

export const CURRENT_DB_VERSION = DB_FORMAT_VERSION;

export interface FormatVersion {
  version: string;
  summary: string;
}

export const FORMATS: readonly FormatVersion[] = [
  { version: '0.9.0', summary: 'field distribution computed at read time by scanning documents' },
  { version: '1.0.0', summary: 'field distribution stored in each index and maintained by every batch' },
  { version: '1.1.0', summary: 'keyword postings grouped in one record per word' },
  { version: '1.2.0', summary: 'document keyword entries stored with narrow ids and positions' },
  { version: '1.3.0', summary: 'pair postings for a short word after a long one' },
  { version: '1.4.0', summary: 'records of frequent prefixes, per field and position' },
];

/** What an upgrade step may do to one index; every change goes through `put`, which journals it. */
export interface IndexUpgradeContext {
  uid: string;
  store: IndexStore;
  /** Write `value` (msgpack-encoded like the rest of `main`) under `key` of the `main` database. */
  putMain(key: string, value: unknown): void;
  /** Declare that the step fills the database `name`, which held nothing before: a rollback empties it. */
  fillsNewDatabase(name: string): void;
  /** Throws if the upgrade was canceled; called between chunks of work. */
  checkpoint(): void;
}

export interface UpgradeStep {
  from: string;
  to: string;
  title: string;
  /** Runs once per index, in its own write transaction. */
  upgradeIndex(ctx: IndexUpgradeContext): void;
  /**
   * Runs once per index after the new version is committed (no rollback any more), in its own
   * write transaction: dropping what only the old format read. Must be idempotent.
   */
  finalizeIndex?(store: IndexStore): void;
}

export const STEPS: readonly UpgradeStep[] = [
  {
    from: '0.9.0',
    to: '1.0.0',
    title: 'store each index field distribution',
    upgradeIndex(ctx) {
      const distribution: Record<string, number> = {};
      let seen = 0;
      for (const docid of ctx.store.docids()) {
        const document = ctx.store.getDocument(docid);
        if (!document) continue;
        for (const field of Object.keys(document)) distribution[field] = (distribution[field] ?? 0) + 1;
        if (++seen % 5000 === 0) ctx.checkpoint();
      }
      ctx.putMain('fieldDistribution', distribution);
    },
  },
  {
    from: '1.0.0',
    to: '1.1.0',
    title: 'group keyword postings per word',
    upgradeIndex(ctx) {
      for (const name of CONVERTED_DATABASES) ctx.fillsNewDatabase(name);
      convertLegacyKeywordLayout(ctx.store, ctx.checkpoint);
    },
    finalizeIndex(store) {
      dropLegacyKeywordLayout(store);
    },
  },
  {
    from: '1.1.0',
    to: '1.2.0',
    title: 'store document keyword entries with narrow ids and positions',
    upgradeIndex(ctx) {
      ctx.fillsNewDatabase(CONVERTED_ENTRIES_DATABASE);
      convertLegacyEntries(ctx.store, ctx.checkpoint);
    },
    finalizeIndex(store) {
      dropLegacyEntries(store);
    },
  },
  {
    from: '1.2.0',
    to: '1.3.0',
    title: 'pair postings for a short word after a long one (written from now on; nothing to convert)',
    upgradeIndex(ctx) {
      ctx.checkpoint();
    },
  },
  {
    from: '1.3.0',
    to: '1.4.0',
    title: 'records of frequent prefixes, built from the word records',
    upgradeIndex(ctx) {
      ctx.fillsNewDatabase(PREFIX_PARTS_DB);
      ctx.fillsNewDatabase(`${PREFIX_PARTS_DB}-tail`);
      fillPrefixRecords(ctx.store, ctx.checkpoint);
    },
  },
];

export type Semver = [number, number, number];

export function parseVersion(text: string): Semver | null {
  const m = /^(\d+)\.(\d+)\.(\d+)$/.exec(text.trim());
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null;
}

export function compareVersions(a: string, b: string): number {
  const pa = parseVersion(a);
  const pb = parseVersion(b);
  if (!pa || !pb) throw new Error(`cannot compare versions \`${a}\` and \`${b}\``);
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return pa[i]! - pb[i]!;
  return 0;
}

/** The chain of steps from `from` to `to`, or null when no dumpless path exists. */
export function upgradePath(from: string, to: string = CURRENT_DB_VERSION): UpgradeStep[] | null {
  const path: UpgradeStep[] = [];
  let at = from;
  while (at !== to) {
    const step = STEPS.find((s) => s.from === at);
    if (!step) return null;
    path.push(step);
    at = step.to;
  }
  return path;
}
