/**
 * What identifies the business's account with a vendor, as it appears in vendor error text (DESIGN §14): OpenAI organisation,
 * project and user ids, API keys and their masked fragments ("Incorrect API key provided: sk-abc***xyz"), Anthropic request ids
 * and organisation UUIDs. Each is replaced by its kind; none of the replacements holds a quote or a backslash, so scrubbed
 * JSON stays valid JSON.
 */
const ACCOUNT_IDENTIFIERS: ReadonlyArray<[RegExp, string]> = [
  [/\bsk-ant-[A-Za-z0-9_*-]+/g, 'sk-ant-***'],
  [/\bsk-(?!ant-)[A-Za-z0-9_*-]+/g, 'sk-***'],
  [/\borg-[A-Za-z0-9]{6,}/g, 'org-***'],
  [/\bproj_[A-Za-z0-9]{6,}/g, 'proj_***'],
  [/\buser-[A-Za-z0-9]{12,}/g, 'user-***'],
  [/\breq_[A-Za-z0-9]{12,}/g, 'req_***'],
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '***'],
];

/** `text` without vendor account identifiers; the very same string when there were none (a passed-through body stays its bytes). */
export function scrubVendorText(text: string): string {
  let scrubbed = text;
  for (const [pattern, replacement] of ACCOUNT_IDENTIFIERS) scrubbed = scrubbed.replace(pattern, replacement);
  return scrubbed;
}
