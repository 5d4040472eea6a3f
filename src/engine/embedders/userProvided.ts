/** `userProvided` source: vectors come only from documents' `_vectors` and the search `vector`. */
import type { Embedder } from './types.js';

export class UserProvidedEmbedder implements Embedder {
  readonly source = 'userProvided' as const;
  constructor(private readonly configured: number) {}
  dimensions(): number {
    return this.configured;
  }
}
