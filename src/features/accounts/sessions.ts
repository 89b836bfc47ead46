/** A signed-in browser: the cookie carries a random token; the database keeps only its SHA-256 (`id`). */
export interface Session {
  id: string;
  userId: string;
  /** Sent back by the console in `x-csrf-token` on every request that changes state. */
  csrfToken: string;
  createdAt: number;
  expiresAt: number;
}

export interface SessionsRepository {
  insert(session: Session): Promise<void>;
  get(id: string): Promise<Session | undefined>;
  /** Slides the expiry forward. */
  touch(id: string, expiresAt: number): Promise<void>;
  delete(id: string): Promise<void>;
  /** Signs a user out everywhere (password changed, user disabled). */
  deleteForUser(userId: string, exceptId?: string): Promise<void>;
}
