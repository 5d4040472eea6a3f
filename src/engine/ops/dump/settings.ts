/**
 * The settings of a dumped index (v6 wire shape) as this engine's settings.
 *
 * Each setting is validated like a PATCH would be. A dump comes from a running instance, so a
 * setting this engine cannot take (one that a newer Meilisearch added, a value we do not
 * support) is left at its default with a warning rather than failing the whole import: the
 * documents matter more. Embedders are taken one by one, keeping only the fields their source
 * has here, so that one odd field does not drop an embedder and the vectors that go with it.
 */
import { allowedFields } from '../../embedders/fields.js';
import { mergeEmbedders } from '../../embedders/settings.js';
import type { EmbedderSource } from '../../embedders/types.js';
import { applySettingsPatch } from '../../settings/apply.js';
import { defaultSettings, type EmbedderSettings, type Settings } from '../../settings/types.js';
import { SETTINGS_FIELDS, validateSetting } from '../../settings/validate.js';
import { validateEmbedders } from '../../embedders/settings.js';

type Nesting = 'top' | 'indexingEmbedder' | 'searchEmbedder';

export function importedSettings(raw: Record<string, unknown>, where: string, warn: (message: string) => void): Settings {
  const patch: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (value === undefined || key === 'embedders') continue;
    if (!(SETTINGS_FIELDS as string[]).includes(key)) {
      warn(`${where}: the setting \`${key}\` is not supported by this engine and is left out`);
      continue;
    }
    try {
      patch[key] = validateSetting(key as keyof Settings, value);
    } catch (error) {
      warn(`${where}: the setting \`${key}\` is left at its default: ${(error as Error).message}`);
    }
  }
  const settings = applySettingsPatch(defaultSettings(), patch as Partial<Settings>);
  settings.embedders = embedders(raw.embedders, where, warn);
  return settings;
}

function embedders(raw: unknown, where: string, warn: (message: string) => void): Record<string, EmbedderSettings> {
  let out: Record<string, EmbedderSettings> = {};
  if (raw === null || raw === undefined) return out;
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    warn(`${where}: \`embedders\` is not an object and is left out`);
    return out;
  }
  for (const [name, config] of Object.entries(raw as Record<string, unknown>)) {
    if (config === null || typeof config !== 'object') continue;
    try {
      const patch = validateEmbedders({ [name]: sanitized(config as Record<string, unknown>, 'top', `${where}: embedder \`${name}\``, warn) });
      out = mergeEmbedders(out, patch);
    } catch (error) {
      warn(`${where}: the embedder \`${name}\` is left out: ${(error as Error).message}`);
    }
  }
  return out;
}

/** The fields this engine has for the embedder's source; `null` fields mean "default" anyway. */
function sanitized(config: Record<string, unknown>, nesting: Nesting, where: string, warn: (message: string) => void): Record<string, unknown> {
  const source = config.source as EmbedderSource;
  let allowed: string[];
  try {
    allowed = allowedFields(source, nesting);
  } catch {
    return config; // an unknown source: validation names it
  }
  const out: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(config)) {
    if (value === null) continue;
    if (!allowed.includes(field)) {
      warn(`${where}: field \`${field}\` is not supported for source \`${source}\` and is left out`);
      continue;
    }
    out[field] = field === 'indexingEmbedder' || field === 'searchEmbedder' ? sanitized(value as Record<string, unknown>, field, where, warn) : value;
  }
  // as the reference: a v1.13 huggingFace embedder without pooling used the mean of the tokens
  if (source === 'huggingFace' && out.pooling === undefined) out.pooling = 'forceMean';
  return out;
}
