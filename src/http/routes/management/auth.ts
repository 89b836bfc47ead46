import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { unauthorized } from '../../../core/errors.ts';
import { parseOrThrow } from '../../../dialects/validation.ts';
import type { SessionsService, SignedIn } from '../../../features/accounts/sessions-service.ts';
import type { SignupService } from '../../../features/accounts/signup-service.ts';
import { SESSION_COOKIE, sessionToken } from '../../plugins/auth.ts';
import { userView } from './views.ts';

const loginBody = z.object({ email: z.string().min(1).max(320), password: z.string().min(1).max(512) });
const signupBody = z.object({ email: z.email().max(320), password: z.string().max(512), name: z.string().trim().min(1).max(200) });

/** Sets the session cookie of a fresh session (sign-in, sign-up, accepted invitation) and answers as login does. */
export function startSession(reply: FastifyReply, signedIn: SignedIn & { token: string }, secureCookies: boolean): { user: ReturnType<typeof userView>; csrfToken: string } {
  const maxAge = Math.floor((signedIn.session.expiresAt - signedIn.session.createdAt) / 1000);
  void reply.setCookie(SESSION_COOKIE, signedIn.token, { path: '/', httpOnly: true, sameSite: 'lax', secure: secureCookies, maxAge });
  return { user: userView(signedIn.user), csrfToken: signedIn.session.csrfToken };
}

export interface AuthRouteOptions {
  /** Cookies are `Secure` when the gateway's public URL is https. */
  secureCookies: boolean;
}

/** POST /api/v1/auth/login, /logout and GET /api/v1/auth/session (DESIGN §10): cookie sessions for the console. */
export function registerAuthRoutes(app: FastifyInstance, services: { sessions: SessionsService; signup: SignupService }, options: AuthRouteOptions): void {
  const { sessions } = services;

  app.post('/api/v1/auth/login', { config: { auth: 'none', name: 'auth.login', doc: { summary: 'Sign in with email and password (sets the session cookie)', body: loginBody } } }, async (request, reply) => {
    const body = parseOrThrow(loginBody, request.body);
    return startSession(reply, await sessions.login(body.email, body.password), options.secureCookies);
  });

  /** DESIGN §10: only when TOLLGATE_SIGNUP=open (closed or invite-only → 403). */
  app.post('/api/v1/auth/signup', { config: { auth: 'none', name: 'auth.signup', doc: { summary: 'Sign up (when TOLLGATE_SIGNUP allows it)', body: signupBody } } }, async (request, reply) => {
    const body = parseOrThrow(signupBody, request.body);
    return startSession(reply, await services.signup.signUp(body), options.secureCookies);
  });

  app.post('/api/v1/auth/logout', { config: { auth: 'user', name: 'auth.logout', doc: { summary: 'Sign out (ends the session)' } } }, async (request, reply) => {
    const token = sessionToken(request);
    if (token) await sessions.logout(token);
    void reply.clearCookie(SESSION_COOKIE, { path: '/' });
    return { ok: true };
  });

  app.get('/api/v1/auth/session', { config: { auth: 'none', name: 'auth.session', doc: { summary: 'The current session and its CSRF token, if signed in' } } }, async (request) => {
    const token = sessionToken(request);
    const signedIn = token ? await sessions.authenticate(token) : undefined;
    if (!signedIn) throw unauthorized();
    return { user: userView(signedIn.user), csrfToken: signedIn.session.csrfToken };
  });
}
