import type { Logger } from 'pino';
import type { Config } from '../../../config/config.ts';
import type { Storage } from '../../../storage/database.ts';
import type { ModelCallDependencies } from '../../inference/model-call.ts';
import type { Embedder } from '../embedder.ts';
import type { ToolsetFactory } from './toolset.ts';
import { knowledgeToolsetFactory } from '../../knowledge/knowledge-toolset.ts';

export interface ToolsetDependencies {
  config: Readonly<Config>;
  storage: Storage;
  calls: ModelCallDependencies;
  embedder: Embedder;
  logger: Logger;
}

/** Every kind of tool an assistant can have, in the order their tools are offered to the model. */
export function createToolsetFactories(dependencies: ToolsetDependencies): ToolsetFactory[] {
  void dependencies;
  const factories: ToolsetFactory[] = [];
  factories.push(knowledgeToolsetFactory(dependencies));
  // MCP servers: (registered by tools/mcp-toolset.ts)
  // API functions: (registered by tools/api-functions-toolset.ts)
  // SQL store: (registered by tools/sql-store-toolset.ts)
  return factories;
}
