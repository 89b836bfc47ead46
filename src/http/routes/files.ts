import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../../core/errors.ts';
import type { TasksService } from '../../features/tasks/tasks-service.ts';

/** Result files of tasks, served by the gateway itself. The id (24 random base62 characters) is the capability. */
export function registerFileRoutes(app: FastifyInstance, tasks: Pick<TasksService, 'file'>): void {
  app.get('/v1/files/:id', { config: { auth: 'none', name: 'files', doc: { summary: 'Download a task\'s result file (the id is the capability)', produces: 'application/octet-stream' } } }, async (request, reply) => {
    const { id } = request.params as { id: string };
    const file = /^file_[0-9A-Za-z]{24}$/.test(id) ? await tasks.file(id) : undefined;
    if (!file) throw new GatewayError('not_found', `File '${id}' not found.`);
    return reply.type(file.contentType).header('cache-control', 'private, max-age=86400').send(file.data);
  });
}
