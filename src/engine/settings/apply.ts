/**
 * Apply a validated settings patch: a `null` value resets that setting to its default, any
 * other value replaces it (nested objects such as `typoTolerance` merge one level deep, as the
 * reference does).
 */
import { mergeEmbedders, type EmbeddersPatch } from '../embedders/settings.js';
import { defaultSettings, type Settings } from './types.js';

const MERGED_OBJECTS = new Set<keyof Settings>(['typoTolerance', 'faceting', 'pagination']);

export function applySettingsPatch(current: Settings, patch: Partial<Record<keyof Settings, unknown>>): Settings {
  const defaults = defaultSettings();
  const next: Record<string, unknown> = { ...current };
  for (const [key, value] of Object.entries(patch) as Array<[keyof Settings, unknown]>) {
    if (value === undefined) continue;
    if (value === null) {
      next[key] = defaults[key];
    } else if (MERGED_OBJECTS.has(key) && typeof value === 'object' && !Array.isArray(value)) {
      const base = { ...(current[key] as object) } as Record<string, unknown>;
      for (const [inner, innerValue] of Object.entries(value as Record<string, unknown>)) {
        base[inner] = innerValue === null ? (defaults[key] as unknown as Record<string, unknown>)[inner] : innerValue;
      }
      next[key] = base;
    } else if (key === 'embedders' && typeof value === 'object') {
      // per-embedder merge with source-aware checks and defaults (src/engine/embedders/settings.ts)
      next[key] = mergeEmbedders(current.embedders, value as EmbeddersPatch);
    } else {
      next[key] = value;
    }
  }
  return next as unknown as Settings;
}
