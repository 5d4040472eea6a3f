/**
 * Incremental maintenance is exact: after random batches of additions, replacements and
 * deletions, the facet and geo databases equal a rebuild from the stored documents.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { DocumentChange } from '../../src/engine/index/extension.js';
import type { IndexStore } from '../../src/engine/index/store.js';
import { facetDbs, readBitmap } from '../../src/engine/search/facets/databases.js';
import { facetExtension } from '../../src/engine/search/facets/extension.js';
import { geoDbs } from '../../src/engine/search/geo/extension.js';
import { geoExtension } from '../../src/engine/search/geo/extension.js';
import type { Document } from '../../src/engine/types.js';
import { TestIndex } from './helpers.js';

/** Everything the extensions stored, in a comparable form (original spellings left out). */
function dump(store: IndexStore): Record<string, unknown> {
  const f = facetDbs(store);
  const g = geoDbs(store);
  const bits = (b: Uint8Array) => [...readBitmap(b)];
  return {
    strings: [...f.strings.getRange({})].map(({ key, value }) => [key, bits(value)]),
    originals: [...f.originals.getKeys({})],
    counts: [...f.counts.getRange({})].map(({ key, value }) => [key, value]),
    numbers: [...f.numbers.getRange({})].map(({ key, value }) => [key, bits(value)]),
    flags: [...f.flags.getRange({})].map(({ key, value }) => [key, bits(value)]),
    docs: [...f.docs.getRange({})].map(({ key, value }) => [key, value]),
    points: [...g.points.getRange({})].map(({ key, value }) => [key, value]),
    cells: [...g.cells.getRange({})].map(({ key, value }) => [key, bits(value)]),
  };
}

const scalar = fc.oneof(
  fc.constantFrom('Red', 'red ', 'Blue', 'green', '', 'ÉTÉ', 'été'),
  fc.integer({ min: -3, max: 3 }),
  fc.constantFrom(0.5, -0.0, 1e6),
  fc.boolean(),
  fc.constant(null),
);
const value = fc.oneof(scalar, fc.array(scalar, { maxLength: 3 }), fc.constant({}));
const doc = fc.record(
  {
    id: fc.integer({ min: 0, max: 15 }),
    color: value,
    nested: fc.oneof(fc.record({ x: value, y: fc.array(fc.record({ z: scalar }), { maxLength: 2 }) }), fc.constant(null)),
    _geo: fc.oneof(fc.constant(null), fc.record({ lat: fc.double({ min: -89, max: 89, noNaN: true }), lng: fc.double({ min: -179, max: 179, noNaN: true }) })),
  },
  { requiredKeys: ['id'] },
);
const batch = fc.oneof(
  fc.array(doc, { minLength: 1, maxLength: 6 }).map((docs) => ({ kind: 'add' as const, docs })),
  fc.array(fc.integer({ min: 0, max: 15 }), { minLength: 1, maxLength: 4 }).map((ids) => ({ kind: 'delete' as const, ids })),
);

describe('incremental facet and geo maintenance', () => {
  it('equals a rebuild after random batches', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(batch, { minLength: 1, maxLength: 8 }), async (batches) => {
        const index = new TestIndex('id', { filterableAttributes: ['color', 'nested', '_geo'], sortableAttributes: ['color'] });
        try {
          for (const b of batches) {
            if (b.kind === 'add') {
              // one version per id per batch, like the pipeline's deduplication
              const last = new Map(b.docs.map((d) => [d.id, d as Document]));
              await index.add([...last.values()]);
            } else index.delete(b.ids);
          }
          const incremental = dump(index.store);
          const settings = index.settings;
          index.store.write(() => {
            const changes: DocumentChange[] = index.allDocuments().map(({ docid, doc }) => ({ docid, after: doc }));
            for (const ext of [facetExtension, geoExtension]) {
              ext.clear(index.store);
              ext.apply(changes, { store: index.store, settings, prepared: null });
            }
          });
          expect(incremental).toEqual(dump(index.store));
        } finally {
          await index.close();
        }
      }),
      { numRuns: 30, seed: 11 },
    );
  }, 60_000);
});
