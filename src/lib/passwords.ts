import { createRequire } from 'node:module';

type Argon2 = typeof import('@node-rs/argon2');

let argon2: Argon2 | undefined;
/**
 * The library, loaded at the first password hashed or checked: its native part maps ~6 MB of memory that a gateway serving
 * only API calls never uses (issue 16: idle RSS).
 */
const library = (): Argon2 => (argon2 ??= createRequire(import.meta.url)('@node-rs/argon2') as Argon2);

/** argon2id with the library's defaults (OWASP's first choice); the PHC string carries its own parameters and salt. */
export const hashPassword = (password: string): Promise<string> => library().hash(password);

/** Constant-time inside the library; a malformed stored hash is a mismatch, never a throw. */
export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  try {
    return await library().verify(stored, password);
  } catch {
    return false;
  }
}

/** A hash of a random password, verified against when the email is unknown, so a wrong email costs the same time as a wrong password. */
let decoy: Promise<string> | undefined;
export const decoyHash = (): Promise<string> => (decoy ??= hashPassword(`decoy-${Math.random()}`));
