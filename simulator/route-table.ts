// Route lookup by `METHOD /path` key: exact keys first, then templates whose `:name` segments each match one
// non-empty, URI-decoded path segment (`GET /v1/videos/:id` → params.id).

export interface RouteMatch<R> {
  route: R;
  params: Readonly<Record<string, string>>;
}

interface Template<R> {
  method: string;
  segments: string[];
  route: R;
}

export class RouteTable<R> {
  readonly #exact = new Map<string, R>();
  readonly #templates: Template<R>[] = [];

  constructor(entries: Iterable<readonly [string, R]>) {
    for (const [key, route] of entries) {
      if (!key.includes('/:')) {
        this.#exact.set(key, route);
        continue;
      }
      const [method = '', path = ''] = key.split(' ');
      this.#templates.push({ method, segments: path.split('/'), route });
    }
  }

  find(method: string, path: string): RouteMatch<R> | undefined {
    const exact = this.#exact.get(`${method} ${path}`);
    if (exact !== undefined) return { route: exact, params: {} };
    const segments = path.split('/');
    for (const template of this.#templates) {
      const params = match(template, method, segments);
      if (params !== undefined) return { route: template.route, params };
    }
    return undefined;
  }
}

function match<R>(template: Template<R>, method: string, segments: readonly string[]): Record<string, string> | undefined {
  if (template.method !== method || template.segments.length !== segments.length) return undefined;
  const params: Record<string, string> = {};
  for (const [index, expected] of template.segments.entries()) {
    const actual = segments[index] ?? '';
    if (!expected.startsWith(':')) {
      if (actual !== expected) return undefined;
      continue;
    }
    if (actual === '') return undefined;
    try {
      params[expected.slice(1)] = decodeURIComponent(actual);
    } catch {
      return undefined;
    }
  }
  return params;
}
