/** A claim on an `Idempotency-Key`: the first request's body hash, the ledger entry it writes, and its answer once given. */
export interface IdempotencyClaim {
  requestHash: string;
  entryId: string;
  /** The first answer (JSON text); null while the first request has not completed. */
  response: string | null;
}

export interface IdempotencyRepository {
  /** Claims the key for this request, or returns the claim an earlier request made (whatever its body). */
  claim(scope: string, key: string, requestHash: string, entryId: string, now: number): Promise<IdempotencyClaim>;
  /** Stores the answer the first request gave. */
  complete(scope: string, key: string, response: string): Promise<void>;
}
