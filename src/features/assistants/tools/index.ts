import type { Logger } from 'pino';
import type { Config } from '../../../config/config.ts';
import type { ToolsetFactory } from './toolset.ts';
import { ApiFunctionsToolsetFactory } from './api-functions-toolset.ts';
import { McpToolsetFactory } from './mcp-toolset.ts';
import { SqlStoreToolsetFactory } from './sql-store-toolset.ts';
import type { KnowledgeService } from '../../knowledge/knowledge-service.ts';
import { KnowledgeToolsetFactory } from '../../knowledge/knowledge-toolset.ts';

export interface ToolsetDependencies {
  config: Readonly<Config>;
  /** The gateway's one knowledge service: the toolset retrieves through it, as the knowledge routes do. */
  knowledge: KnowledgeService;
  logger: Logger;
}

/** Every kind of tool an assistant can have, in the order their tools are offered to the model. */
export function createToolsetFactories(dependencies: ToolsetDependencies): ToolsetFactory[] {
  const factories: ToolsetFactory[] = [];
  factories.push(new KnowledgeToolsetFactory(dependencies.knowledge, dependencies.logger.child({ component: 'knowledge' })));
  factories.push(new McpToolsetFactory({ allowPrivateUrls: dependencies.config.allowPrivateUrls, logger: dependencies.logger.child({ component: 'mcp' }) }));
  factories.push(new ApiFunctionsToolsetFactory({ allowPrivateUrls: dependencies.config.allowPrivateUrls, logger: dependencies.logger.child({ component: 'api-functions' }) }));
  factories.push(new SqlStoreToolsetFactory({ dataDir: dependencies.config.dataDir, limitBytes: dependencies.config.sqlStoreLimitBytes, logger: dependencies.logger.child({ component: 'sql-store' }) }));
  return factories;
}
