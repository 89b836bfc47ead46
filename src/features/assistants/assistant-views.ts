import type { Model } from '../catalog/model.ts';
import { CAPABILITY, type Assistant } from './assistant.ts';

const iso = (ms: number): string => new Date(ms).toISOString();

export function capabilities(assistant: Assistant, model: Model | undefined): number {
  let mask = 0;
  if (model?.vision) mask |= CAPABILITY.vision;
  if (assistant.database) mask |= CAPABILITY.knowledgeBase;
  if (assistant.mcp.length > 0) mask |= CAPABILITY.mcp;
  if (assistant.apiFunctions.length > 0) mask |= CAPABILITY.functions;
  if (assistant.sqlStore) mask |= CAPABILITY.sqlStore;
  return mask;
}

/** SPEC 2.6 as returned by create and update: every field, instruction and functions included. */
export function assistantView(assistant: Assistant, model: Model | undefined): Record<string, unknown> {
  return { ...listItemView(assistant, model), instruction: assistant.instruction, apiFunctions: assistant.apiFunctions };
}

/** The fields every view of an assistant starts with (all of them public). */
function publicFields(assistant: Assistant): Record<string, unknown> {
  return {
    object: 'assistant',
    id: assistant.id,
    createDate: iso(assistant.createdAt),
    updateDate: iso(assistant.updatedAt),
    mention: assistant.mention,
    title: assistant.title,
    subtitle: assistant.subtitle,
    description: assistant.description,
    picture: assistant.picture,
    modelId: assistant.modelId,
  };
}

/** SPEC 4.5's list item: the assistant without `instruction` and `apiFunctions`, with `capabilities`. */
export function listItemView(assistant: Assistant, model: Model | undefined): Record<string, unknown> {
  return {
    ...publicFields(assistant),
    temperature: assistant.temperature,
    capabilities: capabilities(assistant, model),
    sqlStore: assistant.sqlStore,
    access: assistant.access,
    database: assistant.database,
    mcp: assistant.mcp,
  };
}

/** SPEC 2.6's catalog card: public fields only, never instruction, functions or MCP settings. */
export function catalogCardView(assistant: Assistant, owner: { id: string; name: string }, installed: boolean): Record<string, unknown> {
  return {
    ...publicFields(assistant),
    likes: assistant.likes,
    isInstalled: installed,
    owner,
    access: { isPrivate: assistant.access.isPrivate, isFree: assistant.access.isFree, installPrice: assistant.access.installPrice },
  };
}
