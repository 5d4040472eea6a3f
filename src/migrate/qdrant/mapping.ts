/**
 * From a Qdrant collection to an index: the settings derived from the collection's config
 * (`planMapping`) and the document derived from each point (`PointMapper`). The table in
 * README.md describes every rule; mapping.test.ts checks each one.
 */
import type { EmbedderSettings } from '../../engine/settings/types.js';
import { MigrationError } from '../errors.js';
import type { CollectionConfig, DenseVectorSpec, PayloadIndexSpec } from './config.js';
import { MappingReport } from './report.js';
import type { QdrantPoint } from './source.js';

export type VectorsMode = 'keep' | 'reembed' | 'skip';
export type UnsupportedMode = 'skip' | 'convert';

export interface MappingOptions {
  vectors: VectorsMode;
  /** Embedders from `--embedder-from-settings`, by name. */
  embedders?: Record<string, EmbedderSettings>;
  /** Manhattan, sparse and multivectors: reported and skipped, or converted (see README). */
  unsupported: UnsupportedMode;
  /** Turn Qdrant's binary quantization into `binaryQuantized: true`. */
  binaryQuantized: boolean;
  /** Payload key to move into `_geo`; defaults to the first geo-indexed key. */
  geoField?: string;
  /**
   * Whether the target has the embedders' `distance` setting (this engine: yes; a remote
   * server is taken for a Meilisearch, which has none). Default true.
   */
  distanceSetting?: boolean;
  /** Without the setting, rank Dot and Euclid vectors by cosine rather than stop (`--rank-by-cosine`). */
  rankByCosine?: boolean;
}

export const PRIMARY_KEY = 'id';
export const SPARSE_FIELD = 'qdrant_sparse';
export const UNNAMED_EMBEDDER = 'default';

/** How one Qdrant vector reaches the document. */
export interface VectorRoute {
  qdrantName: string | null;
  embedder: string;
  /** multivector: the point's vectors become several embeddings of one document. */
  multi: boolean;
  /** Non-userProvided embedders take `{embeddings, regenerate: false}`. */
  explicit: boolean;
  /** Ranked by cosine where Qdrant used another metric: track how many vectors are not unit length. */
  checkNorm: boolean;
  /** The embedder's `distance`, when the source's metric is carried over and is not cosine. */
  distance?: 'euclidean' | 'dot';
}

export interface IndexSettingsPatch {
  filterableAttributes: string[];
  sortableAttributes: string[];
  searchableAttributes?: string[];
  embedders?: Record<string, EmbedderSettings>;
}

export interface MappingPlan {
  primaryKey: string;
  settings: IndexSettingsPatch;
  /** Payload path (segments) whose `{lat, lon}` becomes `_geo`, or null. */
  geoPath: string[] | null;
  vectorRoutes: VectorRoute[];
  sparseNames: string[];
  /** What to ask scroll for. */
  withVector: boolean | string[];
  /** Plan-level facts for the report (one line each). */
  notes: string[];
  warnings: string[];
}

/** Reserved top-level names: the primary key and every `_`-prefixed name. */
export function isReserved(key: string, extra: ReadonlySet<string>): boolean {
  return key === PRIMARY_KEY || key.startsWith('_') || extra.has(key);
}

/** `id` -> `payload_id`, `_geo` -> `payload__geo`; again while the new name is taken in the same payload. */
export function renameReserved(key: string, taken: (k: string) => boolean): string {
  let name = `payload_${key}`;
  while (taken(name)) name = `payload_${name}`;
  return name;
}

/** A payload index key (`a.b`, `tags[]`) as an attribute path, with the reserved rename applied. */
export function indexKeyToAttribute(key: string, extra: ReadonlySet<string>): string {
  const segments = key.replace(/\[\]/g, '').split('.');
  if (isReserved(segments[0]!, extra)) segments[0] = renameReserved(segments[0]!, () => false);
  return segments.join('.');
}

function embedderName(v: DenseVectorSpec): string {
  return v.name ?? UNNAMED_EMBEDDER;
}

export function planMapping(config: CollectionConfig, o: MappingOptions): MappingPlan {
  const notes: string[] = [];
  const warnings: string[] = [];
  const extraReserved = new Set<string>(o.unsupported === 'convert' && config.sparse.length > 0 ? [SPARSE_FIELD] : []);
  const filterable = new Set<string>();
  const sortable = new Set<string>();
  const searchable: string[] = [];

  const geoIndexes = config.payloadIndexes.filter((p) => p.type === 'geo');
  const geoKey = o.geoField ?? geoIndexes[0]?.key ?? null;
  if (geoKey !== null) {
    filterable.add('_geo');
    sortable.add('_geo');
    notes.push(`geo field "${geoKey}" {lat, lon} -> _geo {lat, lng} (filterable, sortable)`);
  }
  for (const p of config.payloadIndexes) mapPayloadIndex(p, geoKey, extraReserved, filterable, sortable, searchable, notes);

  const vectorRoutes: VectorRoute[] = [];
  const embedders: Record<string, EmbedderSettings> = {};
  const fetchNames: string[] = [];
  if (o.vectors === 'keep') {
    for (const v of config.dense) {
      const route = planVector(v, o, notes, warnings);
      if (!route) continue;
      const fromFile = o.embedders?.[route.embedder];
      const settings: EmbedderSettings = fromFile ?? { source: 'userProvided', dimensions: v.size };
      if (route.distance && settings.distance === undefined) settings.distance = route.distance;
      if (!fromFile && o.binaryQuantized && v.quantization === 'binary') {
        settings.binaryQuantized = true;
        notes.push(`embedder "${route.embedder}": Qdrant binary quantization -> binaryQuantized`);
      } else if (v.quantization) {
        notes.push(`embedder "${route.embedder}": Qdrant ${v.quantization} quantization not carried over${v.quantization === 'binary' ? ' (pass --binary-quantized to map it)' : ''}`);
      }
      route.explicit = settings.source !== 'userProvided';
      embedders[route.embedder] = settings;
      vectorRoutes.push(route);
      fetchNames.push(v.name ?? '');
    }
    for (const [name, e] of Object.entries(o.embedders ?? {})) {
      if (!(name in embedders)) {
        embedders[name] = e;
        notes.push(`embedder "${name}" added from the settings file`);
      }
    }
  } else if (o.vectors === 'reembed') {
    if (!o.embedders || Object.keys(o.embedders).length === 0) {
      throw new MigrationError('config', '--vectors reembed needs --embedder-from-settings FILE with at least one embedder');
    }
    const template = searchable.length > 0 ? searchable.map((f) => `{{doc.${f}}}`).join(' ') : null;
    for (const [name, e] of Object.entries(o.embedders)) {
      const s: EmbedderSettings = { ...e };
      if (s.source !== 'userProvided' && s.documentTemplate === undefined && template) s.documentTemplate = template;
      embedders[name] = s;
      notes.push(`embedder "${name}" (${s.source}) will embed documents${s.documentTemplate ? ` with template ${JSON.stringify(s.documentTemplate)}` : ''}; Qdrant vectors not copied`);
    }
  } else {
    notes.push('vectors skipped (--vectors skip)');
  }

  const sparseNames = config.sparse.map((s) => s.name);
  for (const s of config.sparse) {
    if (o.vectors === 'keep' && o.unsupported === 'convert') {
      notes.push(`sparse vector "${s.name}" kept as data in ${SPARSE_FIELD}.${s.name} {indices, values}; not searchable as a vector`);
      fetchNames.push(s.name);
    } else {
      warnings.push(`sparse vector "${s.name}" skipped: no sparse vector search here (--unsupported-vectors convert keeps it as data)`);
    }
  }
  if (config.aliases.length > 0) notes.push(`Qdrant aliases of this collection: ${config.aliases.join(', ')} (not migrated; use --swap to re-migrate behind a stable index)`);

  const settings: IndexSettingsPatch = { filterableAttributes: [...filterable], sortableAttributes: [...sortable] };
  if (searchable.length > 0) settings.searchableAttributes = searchable;
  if (o.vectors !== 'skip') settings.embedders = embedders;
  const withVector = fetchNames.length === 0 ? false : fetchNames.length === config.dense.length + config.sparse.length ? true : fetchNames;
  return {
    primaryKey: PRIMARY_KEY,
    settings,
    geoPath: geoKey === null ? null : geoKey.replace(/\[\]/g, '').split('.'),
    vectorRoutes,
    sparseNames: o.vectors === 'keep' && o.unsupported === 'convert' ? sparseNames : [],
    // the unnamed vector is asked for with `true` (an empty name is not a valid selector)
    withVector: Array.isArray(withVector) && withVector.includes('') ? true : withVector,
    notes,
    warnings,
  };
}

function mapPayloadIndex(
  p: PayloadIndexSpec,
  geoKey: string | null,
  extra: ReadonlySet<string>,
  filterable: Set<string>,
  sortable: Set<string>,
  searchable: string[],
  notes: string[],
): void {
  const attr = indexKeyToAttribute(p.key, extra);
  switch (p.type) {
    case 'geo':
      if (p.key !== geoKey) {
        filterable.add(attr);
        notes.push(`geo index "${p.key}" kept as a plain object (only one field can be _geo)`);
      }
      return;
    case 'integer':
    case 'float':
    case 'datetime':
      filterable.add(attr);
      sortable.add(attr);
      if (p.type === 'datetime') notes.push(`datetime index "${p.key}": filterable and sortable as RFC 3339 text`);
      return;
    case 'keyword':
    case 'uuid':
    case 'bool':
      filterable.add(attr);
      return;
    case 'text':
      searchable.push(attr);
      notes.push(`text index "${p.key}" -> searchableAttributes`);
      return;
  }
}

function planVector(v: DenseVectorSpec, o: MappingOptions, notes: string[], warnings: string[]): VectorRoute | null {
  const label = v.name === null ? 'unnamed vector' : `vector "${v.name}"`;
  const embedder = embedderName(v);
  const convert = o.unsupported === 'convert';
  if (v.multivector) {
    if (!convert) {
      warnings.push(`${label} is a multivector (late interaction): skipped (--unsupported-vectors convert stores each sub-vector as an embedding of the document)`);
      return null;
    }
    warnings.push(`${label}: multivector converted to several embeddings per document; ranking is best sub-vector, not MaxSim`);
  }
  const carried = o.distanceSetting !== false;
  switch (v.distance) {
    case 'Cosine':
      notes.push(`${label} (${v.size}-d, Cosine) -> userProvided embedder "${embedder}"`);
      return { qdrantName: v.name, embedder, multi: v.multivector, explicit: false, checkNorm: false };
    case 'Dot':
    case 'Euclid': {
      const distance = v.distance === 'Dot' ? 'dot' : 'euclidean';
      if (carried) {
        notes.push(`${label} (${v.size}-d, ${v.distance}) -> userProvided embedder "${embedder}" with distance "${distance}"`);
        return { qdrantName: v.name, embedder, multi: v.multivector, explicit: false, checkNorm: false, distance };
      }
      if (!o.rankByCosine)
        throw new MigrationError(
          'config',
          `${label} uses ${v.distance} distance, and the target (a remote server, taken for a Meilisearch) has no distance setting: it would rank these vectors by cosine, ` +
            `so their nearest neighbours would change. Migrate into a database of this engine (--db-path), which keeps the metric, ` +
            `or pass --rank-by-cosine to accept cosine ranking (same order only for unit-length vectors).`,
        );
      warnings.push(`${label} uses ${v.distance}: ranked by cosine on the target (--rank-by-cosine); same order only for unit-length vectors (checked while copying)`);
      return { qdrantName: v.name, embedder, multi: v.multivector, explicit: false, checkNorm: true };
    }
    case 'Manhattan':
      if (!convert) {
        warnings.push(
          `${label} uses Manhattan distance, which has no equivalent here: skipped. To copy it anyway, pass --unsupported-vectors convert (ranked by ${carried ? 'euclidean' : 'cosine'} distance, ` +
            `an approximation of Manhattan order), or re-embed the documents with --vectors reembed --embedder-from-settings FILE`,
        );
        return null;
      }
      warnings.push(`${label} uses Manhattan distance: converted, ranked by ${carried ? 'euclidean' : 'cosine'} distance`);
      return carried
        ? { qdrantName: v.name, embedder, multi: v.multivector, explicit: false, checkNorm: false, distance: 'euclidean' }
        : { qdrantName: v.name, embedder, multi: v.multivector, explicit: false, checkNorm: true };
  }
}

/** Maps points to documents, counting what it renames, converts and skips. */
export class PointMapper {
  private readonly reserved: ReadonlySet<string>;
  /** Per embedder: vectors seen and how many were not unit length. */
  readonly norms = new Map<string, { total: number; notUnit: number }>();

  constructor(
    readonly plan: MappingPlan,
    readonly report: MappingReport,
  ) {
    this.reserved = new Set(plan.sparseNames.length > 0 ? [SPARSE_FIELD] : []);
  }

  map(point: QdrantPoint): Record<string, unknown> {
    const doc: Record<string, unknown> = { [PRIMARY_KEY]: point.id };
    let payload = point.payload ?? {};
    let geo: { lat: number; lng: number } | undefined;
    if (this.plan.geoPath) ({ geo, payload } = this.takeGeo(payload));
    for (const key of Object.keys(payload)) {
      const value = this.plainValue(payload[key], key);
      if (isReserved(key, this.reserved)) {
        const to = renameReserved(key, (k) => k in payload);
        doc[to] = value;
        this.report.add('renamed', key, `-> ${to} (reserved name)`);
      } else {
        doc[key] = value;
      }
    }
    if (geo) doc._geo = geo;
    if (this.plan.vectorRoutes.length > 0 || this.plan.sparseNames.length > 0) this.mapVectors(point.vector, doc);
    return doc;
  }

  /** Moves the geo field's `{lat, lon}` out of the payload; returns a copy, the point is not mutated. */
  private takeGeo(payload: Record<string, unknown>): { geo?: { lat: number; lng: number }; payload: Record<string, unknown> } {
    const path = this.plan.geoPath!;
    let v: unknown = payload;
    for (const seg of path) {
      if (!v || typeof v !== 'object' || Array.isArray(v)) return { payload };
      v = (v as Record<string, unknown>)[seg];
    }
    const first = Array.isArray(v) ? v[0] : v;
    if (!isGeoPoint(first)) {
      if (v !== undefined && v !== null) this.report.add('skipped', path.join('.'), 'value is not a {lat, lon} point; left as is');
      return { payload };
    }
    if (Array.isArray(v)) {
      this.report.add('converted', path.join('.'), `array of ${v.length} geo points: first -> _geo, field kept`);
      return { geo: { lat: first.lat, lng: first.lon }, payload };
    }
    // remove the field from a copy of each object along the path
    const copyPath = (obj: Record<string, unknown>, depth: number): Record<string, unknown> => {
      const c = { ...obj };
      if (depth === path.length - 1) delete c[path[depth]!];
      else c[path[depth]!] = copyPath(obj[path[depth]!] as Record<string, unknown>, depth + 1);
      return c;
    };
    this.report.add('converted', path.join('.'), '{lat, lon} -> _geo {lat, lng}');
    return { geo: { lat: first.lat, lng: first.lon }, payload: copyPath(payload, 0) };
  }

  /** bigint (integers beyond 2^53 in the payload) become numbers, counted as lossy. */
  private plainValue(v: unknown, path: string): unknown {
    if (typeof v === 'bigint') {
      this.report.add('converted', path, 'integer beyond 2^53 -> nearest double (precision lost)');
      return Number(v);
    }
    if (Array.isArray(v)) return v.some((x) => typeof x === 'bigint' || (x && typeof x === 'object')) ? v.map((x) => this.plainValue(x, path)) : v;
    if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      let out: Record<string, unknown> | null = null;
      for (const k of Object.keys(o)) {
        const x = o[k];
        if (typeof x === 'bigint' || (x && typeof x === 'object')) {
          const y = this.plainValue(x, `${path}.${k}`);
          if (y !== x) (out ??= { ...o })[k] = y;
        }
      }
      return out ?? o;
    }
    return v;
  }

  private mapVectors(raw: unknown, doc: Record<string, unknown>): void {
    const vectors: Record<string, unknown> = {};
    const named = raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : null;
    for (const r of this.plan.vectorRoutes) {
      const v = r.qdrantName === null ? (Array.isArray(raw) ? raw : named?.['']) : named?.[r.qdrantName];
      if (v === undefined || v === null) {
        this.report.add('skipped', `vector ${r.qdrantName ?? '(unnamed)'}`, 'point has no such vector; document has no embedding for it');
        continue;
      }
      if (r.checkNorm) this.trackNorm(r.embedder, r.multi ? (v as number[][]) : [v as number[]]);
      vectors[r.embedder] = r.explicit ? { embeddings: v, regenerate: false } : v;
    }
    for (const name of this.plan.sparseNames) {
      const s = named?.[name];
      if (s) ((doc[SPARSE_FIELD] ??= {}) as Record<string, unknown>)[name] = s;
    }
    if (Object.keys(vectors).length > 0) doc._vectors = vectors;
  }

  private trackNorm(embedder: string, vs: number[][]): void {
    const n = this.norms.get(embedder) ?? { total: 0, notUnit: 0 };
    for (const v of vs) {
      let s = 0;
      for (const x of v) s += x * x;
      n.total++;
      if (Math.abs(Math.sqrt(s) - 1) > 1e-3) n.notUnit++;
    }
    this.norms.set(embedder, n);
  }
}

function isGeoPoint(v: unknown): v is { lat: number; lon: number } {
  return !!v && typeof v === 'object' && typeof (v as { lat: unknown }).lat === 'number' && typeof (v as { lon: unknown }).lon === 'number';
}
