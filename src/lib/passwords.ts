import { hash, verify } from '@node-rs/argon2';

/** argon2id with the library's defaults (OWASP's first choice); the PHC string carries its own parameters and salt. */
export const hashPassword = (password: string): Promise<string> => hash(password);

/** Constant-time inside the library; a malformed stored hash is a mismatch, never a throw. */
export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  try {
    return await verify(stored, password);
  } catch {
    return false;
  }
}

/** A hash of a random password, verified against when the email is unknown, so a wrong email costs the same time as a wrong password. */
let decoy: Promise<string> | undefined;
export const decoyHash = (): Promise<string> => (decoy ??= hash(`decoy-${Math.random()}`));
