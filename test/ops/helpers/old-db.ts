/**
 * A 0.9.0 database written now, by the same procedure as fixtures/db-fixtures.mjs (the current
 * writer minus the stored field distribution): immune to later layout changes of the derived
 * structures, so searches on it exercise today's search code.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Engine } from '../../../src/engine/engine.js';
import { books, restaurants } from '../../data.js';

export async function writeV090Database(dbPath: string): Promise<void> {
  const engine = await Engine.open({ dbPath, logLevel: 'off' });
  const tasks = [
    await engine.addDocuments('books', books(), { primaryKey: 'isbn13' }),
    await engine.updateSettings('books', { filterableAttributes: ['language', 'author'] } as never),
    await engine.addDocuments('restaurants', restaurants()),
  ];
  for (const t of tasks) await engine.waitForTask(t.taskUid, { timeoutMs: 120_000 });
  for (const uid of engine.indexes.uids()) {
    const store = engine.indexes.get(uid).store;
    store.write(() => store.main.removeSync('fieldDistribution'));
  }
  await engine.close();
  writeFileSync(join(dbPath, 'VERSION'), '0.9.0\n');
}
