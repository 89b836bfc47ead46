/** The longest tool result given back to the model, in UTF-16 characters (a bound on the next round's prompt). */
export const MAX_RESULT_CHARS = 20_000;

/** `text` cut to `limit` characters, with a note saying how long it was; whole when it fits. */
export function capResultText(text: string, limit = MAX_RESULT_CHARS): string {
  if (text.length <= limit) return text;
  const code = text.charCodeAt(limit - 1);
  const end = code >= 0xd800 && code <= 0xdbff ? limit - 1 : limit;
  return `${text.slice(0, end)}\n[truncated: the result had ${text.length} characters, the first ${end} are shown]`;
}

/** The message of a caught value, for an error text given to the model. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return `${error.message}${cause}`;
  }
  return String(error);
}
