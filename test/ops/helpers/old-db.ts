/**
 * A 0.9.0 database written now, by the same procedure as fixtures/db-fixtures.mjs (the current
 * writer minus the stored field distribution): immune to later layout changes of the derived
 * structures, so searches on it exercise today's search code.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Engine } from '../../../src/engine/engine.js';

export async function writeV090Database(dbPath: string): Promise<void> {
  const data = '../shared/data/meili-datasets';
  const engine = await Engine.open({ dbPath, logLevel: 'off' });
  const tasks = [
    await engine.addDocuments('books', JSON.parse(readFileSync(join(data, 'books.json'), 'utf8')), { primaryKey: 'isbn13' }),
    await engine.updateSettings('books', { filterableAttributes: ['language', 'author'] } as never),
    await engine.addDocuments('restaurants', JSON.parse(readFileSync(join(data, 'restaurants.json'), 'utf8'))),
  ];
  for (const t of tasks) await engine.waitForTask(t.taskUid, { timeoutMs: 120_000 });
  for (const uid of engine.indexes.uids()) {
    const store = engine.indexes.get(uid).store;
    store.write(() => store.main.removeSync('fieldDistribution'));
  }
  await engine.close();
  writeFileSync(join(dbPath, 'VERSION'), '0.9.0\n');
}
