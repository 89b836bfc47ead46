import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';

/**
 * The built web app (DESIGN §11) lives in `web/dist` of the project; this file runs from `src/http/routes` (tsx) or from
 * the bundle `dist/main.js`, so the project root is found by walking up to the folder that holds `web/`.
 */
export function findWebDist(start = dirname(fileURLToPath(import.meta.url))): string {
  let folder = start;
  for (let depth = 0; depth < 5; depth += 1) {
    if (existsSync(join(folder, 'package.json')) && existsSync(join(folder, 'web'))) return join(folder, 'web', 'dist');
    folder = dirname(folder);
  }
  return join(start, 'web', 'dist');
}

/** The app's own paths (DESIGN §11 table); every other path stays the API's, with its JSON 404. */
export const WEB_APP_PATHS = ['/', '/login', '/signup', '/invite/*', '/reset/*', '/confirm-email/*', '/a/*', '/console', '/console/*'] as const;

/**
 * Nothing but the gateway's own origin: scripts, styles, fonts, images (and `data:` images such as the empty favicon),
 * API calls. No frames of it elsewhere (clickjacking), no plugins, forms post only here.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Hashed file names (`index-3f9a….js`) never change content: browsers keep them a year without asking again. */
const ONE_YEAR_MS = 31_536_000_000;

function secureHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', CONTENT_SECURITY_POLICY)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'same-origin')
    .header('x-frame-options', 'DENY');
}

/**
 * Serves the web app: `/assets/*` with a year's immutable caching, and `index.html` (revalidated on every load, `no-cache`)
 * for the app's paths, where the browser's router takes over. Registered in its own scope, so `reply.sendFile` is the
 * app's only. The auth hook skips these routes (`auth: 'none'`): the app signs in through /api/v1 like any client.
 */
export function registerWebRoutes(app: FastifyInstance, root = findWebDist()): void {
  void app.register(async (scope) => {
    await scope.register(fastifyStatic, { root, serve: false, wildcard: false });

    const indexHtml = (reply: FastifyReply): FastifyReply => {
      if (!existsSync(join(root, 'index.html'))) {
        return secureHeaders(reply)
          .code(503)
          .type('text/plain; charset=utf-8')
          .send('The web console is not built: run `npm run build:web` (npm ci does it).\n');
      }
      return secureHeaders(reply).header('cache-control', 'no-cache').sendFile('index.html', root, { cacheControl: false });
    };

    for (const path of WEB_APP_PATHS) {
      scope.get(path, { config: { auth: 'none', name: 'web.page', doc: { summary: 'A page of the web console', hidden: true } } }, async (_request, reply) => indexHtml(reply));
    }

    scope.get('/assets/*', { config: { auth: 'none', name: 'web.asset', doc: { summary: "The web console's files", hidden: true } } }, async (request, reply) => {
      const file = (request.params as { '*': string })['*'];
      // Only the files under assets/: a `..` would otherwise be resolved away by join() before the file server sees it.
      if (file === '' || file.split('/').some((part) => part === '..' || part === '')) return reply.callNotFound();
      return secureHeaders(reply).sendFile(join('assets', file), root, { maxAge: ONE_YEAR_MS, immutable: true });
    });
  });
}
