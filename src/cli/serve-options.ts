/**
 * The options of `search serve`, declared once: flag name, environment variable (`SEARCH_*`, with
 * the upstream `MEILI_*` spelling accepted as an alias), config-file key (the flag name in
 * snake_case, as in Meilisearch's config.toml), type and default. The command's flags, the help
 * text and the resolution (flag > environment > config file > default) are all derived from this
 * table, so a feature that brings a new option adds one entry to `SERVE_OPTIONS`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parse as parseToml } from 'smol-toml';
import { parseByteSize } from './byte-size.js';

export type OptionKind = 'string' | 'bytes' | 'boolean' | 'enum' | 'count';

export interface OptionSpec {
  /** Flag name without dashes, e.g. `db-path`. */
  name: string;
  description: string;
  kind: OptionKind;
  /** Accepted values of an `enum` option (matched case-insensitively). */
  values?: readonly string[];
  /** Default as an operator would write it; undefined: the engine decides. */
  default?: string | boolean;
  /** Further spellings of the flag (e.g. upstream names), used as oclif aliases. */
  aliases?: readonly string[];
}

export const SERVE_OPTIONS: OptionSpec[] = [
  { name: 'db-path', kind: 'string', default: './data.ms', description: 'Directory where the database is stored.' },
  { name: 'http-addr', kind: 'string', default: '127.0.0.1:7700', description: 'Address and port the HTTP server listens on.' },
  {
    name: 'env',
    kind: 'enum',
    values: ['development', 'production'],
    default: 'development',
    description: 'Deployment environment.',
  },
  {
    name: 'http-payload-size-limit',
    kind: 'bytes',
    default: '100 MB',
    description: 'Largest accepted request body (e.g. `100 MB`, `1 GiB`); larger ones get 413 payload_too_large.',
  },
  {
    name: 'max-multi-search-queries',
    kind: 'count',
    default: '100',
    description:
      'Most queries accepted in one POST /multi-search (each is a full search held in memory until the answer); more get 400 bad_request.',
  },
  {
    name: 'max-indexing-memory',
    kind: 'bytes',
    description: 'Memory the indexer may use for one batch (e.g. `2 GiB`); consecutive document payloads are batched together up to a sixteenth of it. Default: a quarter of the machine memory (or of the container memory limit when lower), at most 256 MiB (a batch holds about 16 bytes of memory per byte of payload until it commits; batches run in the write thread, so searches never wait for them).',
  },
  {
    name: 'search-threads',
    kind: 'count',
    description:
      'Worker threads that answer searches (each with a read-only view of the database), beside the thread that serves HTTP and the write thread. Default: 2 on a machine with more than one core (on 2 cores, 1.33-1.46x the searches per second of none), else 0 (searches run on the HTTP thread).',
  },
  {
    name: 'master-key',
    kind: 'string',
    description:
      'Master key protecting the API: every route but /health then needs `Authorization: Bearer <key>`, and /keys works. Required (at least 16 bytes) with --env production.',
  },
  {
    name: 'task-webhook-url',
    kind: 'string',
    description: 'URL notified after each batch of tasks (gzip NDJSON of the batch\'s tasks); listed by /webhooks, not editable there.',
  },
  {
    name: 'task-webhook-authorization-header',
    kind: 'string',
    description: 'Value of the Authorization header sent to --task-webhook-url.',
  },
  {
    name: 'experimental-allowed-ip-networks',
    kind: 'string',
    description:
      'Private, loopback or link-local networks that webhooks and REST embedders may call (comma-separated CIDRs, or `any`). Default: public addresses only.',
  },
  {
    name: 'no-preview-page',
    kind: 'boolean',
    default: false,
    description:
      'Do not serve the search preview page at `/` (it is never served with --env production); `/` then answers `{"status":"Meilisearch is running"}` as the reference does.',
  },
  {
    name: 'experimental-enable-metrics',
    kind: 'boolean',
    default: false,
    description: 'Serve Prometheus metrics at GET /metrics (API-key action `metrics.get`, on all indexes); off: /metrics answers 400 feature_not_enabled.',
  },
  {
    name: 'experimental-contains-filter',
    kind: 'boolean',
    default: false,
    description: 'Turn on the `containsFilter` experimental feature (`CONTAINS` and `STARTS WITH` in filters) for this run, whatever PATCH /experimental-features says.',
  },
  {
    name: 'experimental-enable-logs-route',
    kind: 'boolean',
    default: false,
    description: 'Turn on the `logsRoute` experimental feature (POST/DELETE /logs/stream, POST /logs/stderr) for this run.',
  },
  {
    name: 'log-level',
    kind: 'enum',
    values: ['OFF', 'ERROR', 'WARN', 'INFO', 'DEBUG', 'TRACE'],
    default: 'INFO',
    description: 'Log verbosity on stderr at start (POST /logs/stderr changes it at run time).',
  },
  {
    name: 'experimental-logs-mode',
    kind: 'enum',
    values: ['human', 'json'],
    default: 'human',
    description: 'Format of the lines written on stderr.',
  },
  // operations (dumps, snapshots, upgrade): read by openWithOps in src/engine/ops/startup.ts
  { name: 'import-dump', kind: 'string', description: 'Import this dump file at start (into an empty --db-path), re-indexing everything.' },
  { name: 'ignore-missing-dump', kind: 'boolean', default: false, description: 'Start normally when the --import-dump file does not exist.' },
  { name: 'ignore-dump-if-db-exists', kind: 'boolean', default: false, description: 'Skip --import-dump when a database already exists.' },
  { name: 'dump-dir', kind: 'string', default: 'dumps/', description: 'Directory where POST /dumps writes its files.' },
  { name: 'import-snapshot', kind: 'string', description: 'Restore this snapshot file at start (into an empty --db-path).' },
  { name: 'ignore-missing-snapshot', kind: 'boolean', default: false, description: 'Start normally when the --import-snapshot file does not exist.' },
  { name: 'ignore-snapshot-if-db-exists', kind: 'boolean', default: false, description: 'Skip --import-snapshot when a database already exists.' },
  { name: 'snapshot-dir', kind: 'string', default: 'snapshots/', description: 'Directory where snapshots are written.' },
  {
    name: 'schedule-snapshot',
    kind: 'string',
    description: 'Take a snapshot every N seconds (`true` alone: every 86400 s).',
  },
  {
    name: 'experimental-dumpless-upgrade',
    kind: 'boolean',
    default: false,
    aliases: ['upgrade-db'],
    description: 'Upgrade a database of an older version in place: an upgradeDatabase task runs first, searches keep working, other tasks wait; canceling it rolls back.',
  },
];

/** The option that names the config file; it is resolved before the others (it cannot come from the file). */
export const CONFIG_FILE_OPTION: OptionSpec = {
  name: 'config-file-path',
  kind: 'string',
  description: 'TOML configuration file; keys are option names in snake_case (`db_path = "./data.ms"`). Default: ./config.toml when present.',
};

export function envName(spec: OptionSpec): string {
  return `SEARCH_${spec.name.toUpperCase().replace(/-/g, '_')}`;
}

export function upstreamEnvName(spec: OptionSpec): string {
  return `MEILI_${spec.name.toUpperCase().replace(/-/g, '_')}`;
}

export function configKey(spec: OptionSpec): string {
  return spec.name.replace(/-/g, '_');
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export type OptionValue = string | number | boolean;
export type ResolvedOptions = Record<string, OptionValue | undefined>;

/** Check and normalise one raw value (from any source) for its option. */
export function coerceOption(spec: OptionSpec, raw: unknown, source: string): OptionValue {
  const bad = (expected: string): ConfigError =>
    new ConfigError(`Invalid value \`${String(raw)}\` for \`${spec.name}\` (${source}): expected ${expected}.`);
  switch (spec.kind) {
    case 'string':
      if (typeof raw !== 'string' || raw === '') throw bad('a non-empty string');
      return raw;
    case 'bytes': {
      const bytes = typeof raw === 'string' || typeof raw === 'number' ? parseByteSize(raw) : undefined;
      if (bytes === undefined) throw bad('a byte size such as `100 MB` or `2 GiB`');
      return bytes;
    }
    case 'boolean':
      if (typeof raw === 'boolean') return raw;
      if (raw === 'true' || raw === '1') return true;
      if (raw === 'false' || raw === '0') return false;
      throw bad('`true` or `false`');
    case 'count': {
      const count = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d+$/.test(raw.trim()) ? Number(raw) : NaN;
      if (!Number.isSafeInteger(count) || count < 0) throw bad('a whole number, 0 or more');
      return count;
    }
    case 'enum': {
      const found = spec.values!.find((v) => typeof raw === 'string' && v.toLowerCase() === raw.toLowerCase());
      if (found === undefined) throw bad(`one of ${spec.values!.join(', ')}`);
      return found;
    }
  }
}

function readEnv(spec: OptionSpec, env: NodeJS.ProcessEnv): { raw: string; source: string } | undefined {
  for (const name of [envName(spec), upstreamEnvName(spec)]) {
    const raw = env[name];
    if (raw !== undefined && raw !== '') return { raw, source: `environment variable ${name}` };
  }
  return undefined;
}

/** Load the config file: the given path must exist; the default `./config.toml` is optional. */
export function loadConfigFile(path: string | undefined, cwd: string): { path: string; values: Record<string, unknown> } | undefined {
  const explicit = path !== undefined;
  const file = path ?? `${cwd}/config.toml`;
  if (!existsSync(file)) {
    if (explicit) throw new ConfigError(`The configuration file \`${file}\` does not exist.`);
    return undefined;
  }
  try {
    return { path: file, values: parseToml(readFileSync(file, 'utf8')) as Record<string, unknown> };
  } catch (error) {
    throw new ConfigError(`The configuration file \`${file}\` is not valid TOML: ${(error as Error).message}`);
  }
}

/**
 * Resolve every option: command-line flag, then `SEARCH_*` / `MEILI_*` environment variable, then
 * the config file, then the default. Unknown config-file keys are an error (a typo must not be
 * silently ignored).
 */
export function resolveOptions(
  specs: readonly OptionSpec[],
  flags: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
  cwd: string,
): { options: ResolvedOptions; configFile: string | undefined } {
  const configFlag = flags[CONFIG_FILE_OPTION.name];
  const configPath =
    typeof configFlag === 'string' ? configFlag : (readEnv(CONFIG_FILE_OPTION, env)?.raw ?? undefined);
  const file = loadConfigFile(configPath, cwd);
  if (file) {
    const known = new Set(specs.map(configKey));
    for (const key of Object.keys(file.values))
      if (!known.has(key)) throw new ConfigError(`Unknown key \`${key}\` in the configuration file \`${file.path}\`.`);
  }
  const options: ResolvedOptions = {};
  for (const spec of specs) {
    const fromFlag = flags[spec.name];
    const fromEnv = readEnv(spec, env);
    const fromFile = file?.values[configKey(spec)];
    if (fromFlag !== undefined) options[spec.name] = coerceOption(spec, fromFlag, `--${spec.name}`);
    else if (fromEnv) options[spec.name] = coerceOption(spec, fromEnv.raw, fromEnv.source);
    else if (fromFile !== undefined) options[spec.name] = coerceOption(spec, fromFile, `config file ${file!.path}`);
    else if (spec.default !== undefined) options[spec.name] = coerceOption(spec, spec.default, 'default');
  }
  return { options, configFile: file?.path };
}
