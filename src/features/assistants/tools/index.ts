import type { Logger } from 'pino';
import type { Config } from '../../../config/config.ts';
import type { Storage } from '../../../storage/database.ts';
import type { ModelCallDependencies } from '../../inference/model-call.ts';
import type { Embedder } from '../embedder.ts';
import type { ToolsetFactory } from './toolset.ts';
import { ApiFunctionsToolsetFactory } from './api-functions-toolset.ts';
import { McpToolsetFactory } from './mcp-toolset.ts';
import { SqlStoreToolsetFactory } from './sql-store-toolset.ts';
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
  factories.push(new McpToolsetFactory({ allowPrivateUrls: dependencies.config.allowPrivateUrls, logger: dependencies.logger.child({ component: 'mcp' }) }));
  factories.push(new ApiFunctionsToolsetFactory({ allowPrivateUrls: dependencies.config.allowPrivateUrls, logger: dependencies.logger.child({ component: 'api-functions' }) }));
  factories.push(new SqlStoreToolsetFactory({ dataDir: dependencies.config.dataDir, limitBytes: dependencies.config.sqlStoreLimitBytes, logger: dependencies.logger.child({ component: 'sql-store' }) }));
  return factories;
}
