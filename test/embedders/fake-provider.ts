/**
 * A local HTTP server speaking the shapes of embedding providers (OpenAI, Ollama, a custom REST
 * API), with failure injection, for tests: nothing leaves the machine.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A deterministic toy embedding: texts sharing words get close vectors. */
export function toyEmbedding(text: string, dimensions = 8): number[] {
  const v = new Array<number>(dimensions).fill(0);
  for (const word of text.toLowerCase().split(/\W+/).filter(Boolean)) {
    let h = 2166136261;
    for (const c of word) h = Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0;
    v[h % dimensions]! += 1;
  }
  if (v.every((x) => x === 0)) v[0] = 1;
  return v;
}

export interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
}

export interface FakeProvider {
  url: string;
  received: Received[];
  /** Status codes to answer with, one per incoming request, before answering normally. */
  failures: number[];
  /** Dimensions of the vectors returned. */
  dimensions: number;
  close(): Promise<void>;
}

export async function startFakeProvider(dimensions = 8): Promise<FakeProvider> {
  const state: FakeProvider = { url: '', received: [], failures: [], dimensions, close: async () => {} };
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = raw ? JSON.parse(raw) : undefined;
      state.received.push({ path: req.url ?? '', headers: req.headers, body });
      const failure = state.failures.shift();
      if (failure !== undefined) {
        res.writeHead(failure, { 'content-type': 'application/json', ...(failure === 429 ? { 'retry-after': '0' } : {}) });
        res.end(JSON.stringify({ error: `injected ${failure}` }));
        return;
      }
      const embed = (t: string) => toyEmbedding(t, state.dimensions);
      let answer: unknown;
      switch (req.url) {
        case '/v1/embeddings': // OpenAI
          answer = { object: 'list', data: (body.input as string[]).map((t, index) => ({ object: 'embedding', index, embedding: embed(t) })).reverse() };
          break;
        case '/api/embed': // Ollama, batched
          answer = { model: body.model, embeddings: (body.input as string[]).map(embed) };
          break;
        case '/api/embeddings': // Ollama, legacy
          answer = { embedding: embed(body.prompt) };
          break;
        case '/rest/batch': // custom REST: {"inputs": [...]} -> {"results": [{"vec": [...]}, ...]}
          answer = { results: (body.inputs as string[]).map((t) => ({ vec: embed(t) })) };
          break;
        case '/rest/single': // custom REST: {"query": {"text": "..."}} -> {"output": {"vector": [...]}}
          answer = { output: { vector: embed(body.query.text) } };
          break;
        default:
          res.writeHead(404).end('{"error":"no such route"}');
          return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return state;
}
