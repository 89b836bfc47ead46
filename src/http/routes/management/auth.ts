import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { unauthorized } from '../../../core/errors.ts';
import { parseOrThrow } from '../../../dialects/validation.ts';
import type { SessionsService } from '../../../features/accounts/sessions-service.ts';
import { SESSION_COOKIE } from '../../plugins/auth.ts';
import { userView } from './views.ts';

const loginBody = z.object({ email: z.string().min(1).max(320), password: z.string().min(1).max(512) });

export interface AuthRouteOptions {
  /** Cookies are `Secure` when the gateway's public URL is https. */
  secureCookies: boolean;
}

/** POST /api/v1/auth/login, /logout and GET /api/v1/auth/session (DESIGN §10): cookie sessions for the console. */
export function registerAuthRoutes(app: FastifyInstance, sessions: SessionsService, options: AuthRouteOptions): void {
  const setCookie = (reply: FastifyReply, token: string, maxAgeSeconds: number): void => {
    void reply.setCookie(SESSION_COOKIE, token, { path: '/', httpOnly: true, sameSite: 'lax', secure: options.secureCookies, maxAge: maxAgeSeconds });
  };

  app.post('/api/v1/auth/login', { config: { auth: 'none', name: 'auth.login' } }, async (request, reply) => {
    const body = parseOrThrow(loginBody, request.body);
    const signedIn = await sessions.login(body.email, body.password);
    setCookie(reply, signedIn.token, Math.floor((signedIn.session.expiresAt - signedIn.session.createdAt) / 1000));
    return { user: userView(signedIn.user), csrfToken: signedIn.session.csrfToken };
  });

  app.post('/api/v1/auth/logout', { config: { auth: 'user', name: 'auth.logout' } }, async (request, reply) => {
    const token = request.cookies[SESSION_COOKIE];
    if (token) await sessions.logout(token);
    void reply.clearCookie(SESSION_COOKIE, { path: '/' });
    return { ok: true };
  });

  app.get('/api/v1/auth/session', { config: { auth: 'none', name: 'auth.session' } }, async (request) => {
    const token = request.cookies[SESSION_COOKIE];
    const signedIn = token ? await sessions.authenticate(token) : undefined;
    if (!signedIn) throw unauthorized();
    return { user: userView(signedIn.user), csrfToken: signedIn.session.csrfToken };
  });
}
