/**
 * Everything the migration changed on the way, counted: renamed fields, conversions, skipped
 * data and warnings. Counting (instead of listing per point) keeps it small for any collection.
 */

export interface ReportEntry {
  kind: 'renamed' | 'converted' | 'skipped';
  what: string;
  detail: string;
  count: number;
}

export interface MappingReportJson {
  renamed: ReportEntry[];
  converted: ReportEntry[];
  skipped: ReportEntry[];
  warnings: string[];
}

export class MappingReport {
  private readonly entries = new Map<string, ReportEntry>();
  readonly warnings: string[] = [];

  add(kind: ReportEntry['kind'], what: string, detail: string, n = 1): void {
    const key = `${kind}\u0000${what}\u0000${detail}`;
    const e = this.entries.get(key);
    if (e) e.count += n;
    else this.entries.set(key, { kind, what, detail, count: n });
  }

  warn(message: string): void {
    if (!this.warnings.includes(message)) this.warnings.push(message);
  }

  toJSON(): MappingReportJson {
    const all = [...this.entries.values()];
    const of = (k: ReportEntry['kind']) => all.filter((e) => e.kind === k).sort((a, b) => a.what.localeCompare(b.what));
    return { renamed: of('renamed'), converted: of('converted'), skipped: of('skipped'), warnings: [...this.warnings] };
  }

  /** Restores counts saved in a checkpoint, so a resumed run reports the whole migration. */
  static fromJSON(j: MappingReportJson | undefined): MappingReport {
    const r = new MappingReport();
    if (!j) return r;
    for (const e of [...j.renamed, ...j.converted, ...j.skipped]) r.add(e.kind, e.what, e.detail, e.count);
    for (const w of j.warnings) r.warn(w);
    return r;
  }
}
