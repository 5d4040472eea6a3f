import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Engine, type EngineOptions } from '../../src/engine/engine.js';

/** A fresh engine on a temporary database directory; `cleanup` closes it and removes the files. */
export async function tempEngine(options: Partial<EngineOptions> = {}): Promise<{ engine: Engine; dbPath: string; cleanup: () => Promise<void> }> {
  const dbPath = mkdtempSync(join(tmpdir(), 'search-engine-'));
  const engine = await Engine.open({ dbPath, logLevel: 'off', ...options });
  return {
    engine,
    dbPath,
    cleanup: async () => {
      await engine.close();
      rmSync(dbPath, { recursive: true, force: true });
    },
  };
}
