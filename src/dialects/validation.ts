import type { z } from 'zod';
import { invalidParam, type GatewayError } from '../core/errors.ts';

/** `messages[0].role` from a zod path. */
export function paramPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const part of path) out += typeof part === 'number' ? `[${part}]` : `${out ? '.' : ''}${String(part)}`;
  return out || 'body';
}

/** The first problem zod found, as SPEC's 400: message `<param>: <constraint text>`; `at` is where the parsed value sits in the body. */
export function validationError(error: z.ZodError, at: ReadonlyArray<PropertyKey> = []): GatewayError {
  const issue = error.issues[0];
  if (!issue) return invalidParam(at.length > 0 ? paramPath(at) : 'body', 'is invalid');
  const param = paramPath([...at, ...issue.path]);
  if (issue.code === 'invalid_type' && issue.input === undefined) return invalidParam(param, 'is required');
  return invalidParam(param, issue.message.replace(/^Invalid input: /, ''));
}

/** Parses with a schema or throws SPEC's 400; `at` is where `input` sits in the body (`['input', 2]`), for the error's param. */
export function parseOrThrow<T extends z.ZodType>(schema: T, input: unknown, at: ReadonlyArray<PropertyKey> = []): z.output<T> {
  const result = schema.safeParse(input);
  if (!result.success) throw validationError(result.error, at);
  return result.data;
}
