import { useInfiniteQuery } from '@tanstack/react-query';
import { api, query } from './client.ts';
import type { List } from './types.ts';

export type ListParams = Record<string, string | number | undefined | null>;

export interface PagedListOptions<T> {
  enabled?: boolean;
  /** How soon to ask again given the rows loaded (milliseconds), or false: a list whose rows move on their own (tasks). */
  refetchInterval?: (rows: readonly T[]) => number | false;
}

/**
 * A list of the API (`{object:"list", data, next_cursor}`) read page by page: `rows` holds every page loaded so far, and the
 * query itself is what DataTable takes as its `state` and `more` (pending, error, next page).
 */
export function usePagedList<T>(key: readonly unknown[], path: string, params: ListParams = {}, options: PagedListOptions<T> = {}) {
  const { refetchInterval } = options;
  const pages = useInfiniteQuery({
    queryKey: [...key, params],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) => api<List<T>>('GET', `${path}${query({ ...params, cursor: pageParam })}`),
    getNextPageParam: (page) => page.next_cursor ?? undefined,
    ...(options.enabled === undefined ? {} : { enabled: options.enabled }),
    ...(refetchInterval ? { refetchInterval: (current: { state: { data?: { pages: Array<List<T>> } } }) => refetchInterval(current.state.data?.pages.flatMap((page) => page.data) ?? []) } : {}),
  });
  return { rows: pages.data?.pages.flatMap((page) => page.data) ?? [], pages };
}
