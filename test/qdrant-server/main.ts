/**
 * Runs the Qdrant test server on its own (for benchmarks and manual runs):
 * `node <compiled>/test/qdrant-server/main.js [glove:N | fixtures]` prints the URL on stdout
 * (`glove:N`: the benchmark's full GloVe set beside the repository, bench/glove-collection.ts).
 */
import { gloveCollection } from '../../bench/glove-collection.js';
import { allFixtures } from './fixtures.js';
import { startQdrantServer } from './server.js';

const arg = process.argv[2] ?? 'fixtures';
const collections = arg.startsWith('glove:') ? [gloveCollection(Number(arg.slice(6)))] : allFixtures();
const server = await startQdrantServer({ collections, openApiPath: process.env.QDRANT_OPENAPI ?? undefined });
process.stdout.write(`${server.url}\n`);
const stop = () => void server.close().finally(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
