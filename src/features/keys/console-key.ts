import type { ApiKey } from './keys.ts';

/** The key id a signed-in session's spending is booked under (ledger, request log, usage by key). */
export const CONSOLE_KEY_ID = 'console';

/**
 * What a signed-in session acts as where a service expects a key (the console adds a knowledge document, which is charged):
 * the user's own balance and nothing else — no org, every model, no limits. It authenticates nothing and is never stored;
 * services scope by its `userId` exactly as they scope by an inference key's, so the console sees what the user's keys see.
 */
export function consoleKey(userId: string): ApiKey {
  return {
    id: CONSOLE_KEY_ID,
    userId,
    orgId: null,
    name: 'console',
    allowedModels: null,
    rateLimit: null,
    revokedAt: null,
    createdAt: 0,
    scope: 'management',
    expiresAt: null,
    disabled: false,
    limit: null,
    tpm: null,
  };
}
