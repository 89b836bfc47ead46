import { capResultText } from './tool-result-text.ts';

type Item = Record<string, unknown>;

const isItem = (value: unknown): value is Item => typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** Approximate size of base64 data, for the summary of a non-text item. */
const base64Bytes = (data: unknown): number => Math.floor((text(data).replace(/=+$/, '').length * 3) / 4);

/** One content item as text: text as it is, embedded text resources inline, other kinds summarized in brackets. */
function itemText(item: Item): string {
  switch (item.type) {
    case 'text':
      return text(item.text);
    case 'image':
    case 'audio':
      return `[${item.type}: ${text(item.mimeType) || 'unknown type'}, ${base64Bytes(item.data)} bytes]`;
    case 'resource': {
      const resource = isItem(item.resource) ? item.resource : {};
      if (typeof resource.text === 'string') return resource.text;
      return `[resource ${text(resource.uri)}: ${text(resource.mimeType) || 'binary'}, ${base64Bytes(resource.blob)} bytes]`;
    }
    case 'resource_link':
      return `[resource link: ${text(item.name) || text(item.uri)} <${text(item.uri)}>]`;
    default:
      return `[${text(item.type) || 'unknown'} content]`;
  }
}

/**
 * The text the model reads for an MCP `tools/call` result: the text of its content items joined by newlines (non-text
 * items summarized), else its structured content as JSON; `Error: ` first when the tool reports an error; capped.
 */
export function renderMcpResult(result: Item): string {
  const content = Array.isArray(result.content) ? result.content.filter(isItem) : [];
  let body = content.map(itemText).join('\n');
  if (!body && result.structuredContent !== undefined) body = JSON.stringify(result.structuredContent);
  if (!body && result.toolResult !== undefined) body = JSON.stringify(result.toolResult);
  if (!body) body = '(the tool returned no content)';
  return capResultText(result.isError === true ? `Error: ${body}` : body);
}
