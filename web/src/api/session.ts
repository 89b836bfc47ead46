import { useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiError, api, rememberCsrf } from './client.ts';
import type { Me, Session } from './types.ts';

/** The signed-in session, or null when nobody is signed in (401). */
export const sessionQuery = {
    queryKey: ['session'],
    queryFn: async (): Promise<Session | null> => {
      try {
        const session = await api<Session>('GET', '/api/v1/auth/session');
        rememberCsrf(session.csrfToken);
        return session;
      } catch (error) {
        if (error instanceof ApiError && error.status === 401) {
          rememberCsrf(undefined);
          return null;
        }
        throw error;
      }
    },
    staleTime: 60_000,
    retry: false,
};

export function useSession() {
  return useQuery(sessionQuery);
}

/** The user with balances and organisations (GET /api/v1/me). */
export function useMe() {
  return useQuery({ queryKey: ['me'], queryFn: () => api<Me>('GET', '/api/v1/me') });
}

/** After sign-in, sign-up or an accepted invitation: the session the answer started. */
export function useSignedIn() {
  const client = useQueryClient();
  return (session: Session) => {
    rememberCsrf(session.csrfToken);
    client.clear();
    client.setQueryData(['session'], session);
  };
}
