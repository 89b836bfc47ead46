import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { parseOrThrow } from '../../dialects/validation.ts';
import type { TasksService } from '../../features/tasks/tasks-service.ts';
import { imageTaskView, type FileUrl } from '../../features/tasks/task-views.ts';
import { IMAGE_ACTIONS } from '../../features/tasks/task.ts';
import { keyText } from '../plugins/auth.ts';
import { callerOf, walletFromQuery } from '../caller.ts';

const imagineSchema = z.object({
  prompt: z.string().min(1, 'must not be empty').max(4000),
  useWalletBalance: z.boolean().optional(),
  webhook_url: z.string().optional(),
});

const actionSchema = z.object({
  taskId: z.string().min(1),
  action: z.enum(IMAGE_ACTIONS),
  useWalletBalance: z.boolean().optional(),
});

/** SPEC 4.7 image tasks (unofficial endpoint): imagine, read, follow-up actions. */
export function registerImagegenRoutes(app: FastifyInstance, tasks: TasksService, fileUrl: FileUrl): void {
  app.post('/v1/imagegen/imagine', { config: { name: 'imagegen.imagine', doc: { summary: 'Create an image task (SPEC 4.7)', body: imagineSchema } } }, async (request) => {
    const body = parseOrThrow(imagineSchema, request.body);
    const task = await tasks.imagine(callerOf(request), {
      prompt: body.prompt,
      webhookUrl: body.webhook_url,
      useWalletBalance: body.useWalletBalance === true || walletFromQuery(request),
      apiKeyText: keyText(request) ?? '',
    });
    return imageTaskView(task, fileUrl);
  });

  app.get('/v1/imagegen/tasks/:id', { config: { name: 'imagegen.task', doc: { summary: 'Read an image task (SPEC 2.7)' } } }, async (request) => {
    const { id } = request.params as { id: string };
    return imageTaskView(await tasks.get(callerOf(request), id, 'imagine'), fileUrl);
  });

  app.post('/v1/imagegen/action', { config: { name: 'imagegen.action', doc: { summary: 'Act on an image task\'s result (upscale, variation)', body: actionSchema } } }, async (request) => {
    const body = parseOrThrow(actionSchema, request.body);
    const task = await tasks.action(callerOf(request), body.taskId, body.action, keyText(request) ?? '', body.useWalletBalance === true || walletFromQuery(request));
    return imageTaskView(task, fileUrl);
  });
}
