import type { z } from 'zod';
import { invalidParam, type GatewayError } from '../core/errors.ts';

/** `messages[0].role` from a zod path. */
export function paramPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const part of path) out += typeof part === 'number' ? `[${part}]` : `${out ? '.' : ''}${String(part)}`;
  return out || 'body';
}

/** The first problem zod found, as SPEC's 400: message `<param>: <constraint text>`. */
export function validationError(error: z.ZodError): GatewayError {
  const issue = error.issues[0];
  if (!issue) return invalidParam('body', 'is invalid');
  const param = paramPath(issue.path);
  if (issue.code === 'invalid_type' && issue.input === undefined) return invalidParam(param, 'is required');
  return invalidParam(param, issue.message.replace(/^Invalid input: /, ''));
}

/** Parses with a schema or throws SPEC's 400. */
export function parseOrThrow<T extends z.ZodType>(schema: T, input: unknown): z.output<T> {
  const result = schema.safeParse(input);
  if (!result.success) throw validationError(result.error);
  return result.data;
}
