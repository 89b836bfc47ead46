import { QueryClient } from '@tanstack/react-query';
import { ApiError } from './client.ts';

/** The app's one cache of API answers (the router's guards read the session from it too). */
export const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      staleTime: 5_000,
      refetchOnWindowFocus: false,
      // A refusal (4xx) is an answer, shown where it happened; only a lost connection or a 5xx is worth one more try.
      retry: (failures, error) => failures < 1 && !(error instanceof ApiError && error.status >= 400 && error.status < 500),
    },
  },
});
