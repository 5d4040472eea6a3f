/** The human-readable end-of-run summary (stdout without --json). */
import type { CollectionResult, MigrationResult } from './pipeline.js';

export function formatSummary(r: MigrationResult): string {
  const out: string[] = [];
  for (const c of r.collections) out.push(...collectionLines(c, r.dryRun));
  out.push(r.dryRun ? 'Dry run: nothing was written.' : r.ok ? `Done. Peak RSS ${r.peakRssMb} MB.` : 'FAILED: verification found differences (see above).');
  return out.join('\n') + '\n';
}

function collectionLines(c: CollectionResult, dryRun: boolean): string[] {
  const l: string[] = [];
  const alias = c.viaAlias ? ` (alias ${c.viaAlias})` : '';
  l.push(`${dryRun ? 'Plan for' : 'Collection'} ${c.collection}${alias} -> index ${c.index}: ${c.counts.qdrantPoints} points`);
  const vectors = c.config.dense.map((v) => `${v.name ?? '(unnamed)'} ${v.size}-d ${v.distance}${v.multivector ? ' multivector' : ''}${v.quantization ? ` ${v.quantization}` : ''}`);
  if (vectors.length) l.push(`  vectors: ${vectors.join(', ')}`);
  if (c.config.sparse.length) l.push(`  sparse vectors: ${c.config.sparse.map((s) => s.name).join(', ')}`);
  if (c.config.payloadIndexes.length) l.push(`  payload indexes: ${c.config.payloadIndexes.map((p) => `${p.key}:${p.type}`).join(', ')}`);
  if (c.config.aliases.length) l.push(`  aliases: ${c.config.aliases.join(', ')}`);
  const s = c.plan.settings;
  l.push(`  primary key: ${c.plan.primaryKey}`);
  l.push(`  filterable: ${s.filterableAttributes.join(', ') || '(none)'}; sortable: ${s.sortableAttributes.join(', ') || '(none)'}`);
  if (s.searchableAttributes) l.push(`  searchable: ${s.searchableAttributes.join(', ')}`);
  if (s.embedders) l.push(`  embedders: ${Object.entries(s.embedders).map(([n, e]) => `${n} (${e.source}${e.dimensions ? ` ${String(e.dimensions)}-d` : ''})`).join(', ') || '(none)'}`);
  for (const n of c.plan.notes) l.push(`  note: ${n}`);
  for (const w of [...c.plan.warnings, ...c.report.warnings]) l.push(`  warning: ${w}`);
  for (const e of [...c.report.renamed, ...c.report.converted, ...c.report.skipped]) l.push(`  ${e.kind}: ${e.what} ${e.detail} (${e.count})`);
  if (!dryRun) {
    if (c.resumedFrom !== null) l.push(`  resumed from offset ${c.resumedFrom}`);
    l.push(`  copied ${c.counts.migratedThisRun} points in ${c.seconds.toFixed(1)} s (${c.pointsPerSecond} points/s), ${c.counts.batches} batches`);
    const v = c.verification;
    if (v) {
      l.push(`  verification: ${v.passed ? 'passed' : 'FAILED'} (Qdrant exact count ${v.qdrantCount}, documents ${v.documentCount}, ${v.sampled} sampled, ${v.mismatches.length} mismatches)`);
      for (const m of v.mismatches.slice(0, 10)) l.push(`    ${m.id} ${m.field}: expected ${JSON.stringify(m.expected)}, got ${JSON.stringify(m.actual)}`);
    }
    if (c.swapped) l.push(`  swapped into ${c.index}`);
  }
  return l;
}
