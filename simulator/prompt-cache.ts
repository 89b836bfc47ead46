// Prompt-cache memory of one simulator instance: hashes of prompt prefixes seen before.
// A prefix hash covers the model id and the prefix's parts in order, so a cache never crosses models.

import { createHash, type Hash } from 'node:crypto';

/** Bound on remembered prefixes; past it the memory starts over (like a cache expiring). */
const MAX_ENTRIES = 100_000;

export class PromptCache {
  #seen = new Set<string>();

  has(hash: string): boolean {
    return this.#seen.has(hash);
  }

  remember(hash: string): void {
    if (this.#seen.size >= MAX_ENTRIES) this.#seen.clear();
    this.#seen.add(hash);
  }

  clear(): void {
    this.#seen.clear();
  }
}

/** Starts a running prefix hash for a model; feed parts with `update`, read with `prefixDigest`. */
export function startPrefixHash(model: string): Hash {
  return createHash('sha1').update(model).update('\u0000');
}

export function prefixDigest(hash: Hash): string {
  return hash.copy().digest('base64');
}
