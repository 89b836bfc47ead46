/** A JSON call with a bearer credential; returns status and parsed body. For the admin API and the management API alike. */
export type JsonCall = <T = Record<string, unknown>>(method: string, path: string, body?: unknown) => Promise<{ status: number; body: T }>;

export function jsonClient(base: string, token: string, headers: Record<string, string> = {}): JsonCall {
  return async <T,>(method: string, path: string, body?: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
  };
}
