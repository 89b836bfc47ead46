import { GatewayError, invalidParam, modelDeprecated } from '../../core/errors.ts';
import type { Model, ModelKind } from './model.ts';

/** The endpoints of SPEC 9.6 (and the others that serve models), as the resolver knows them. */
export type ModelEndpoint =
  | 'chat.completions'
  | 'responses'
  | 'embeddings'
  | 'moderations'
  | 'messages'
  | 'messages.count_tokens'
  | 'media.create'
  | 'media.generate'
  | 'media.tasks'
  | 'media.price'
  | 'audio.transcriptions'
  | 'assistant.chat';

/** SPEC 9.6: endpoints that neither redirect nor answer 410 serve a retired model as it is. */
const NO_RETIREMENT_HANDLING: ReadonlySet<ModelEndpoint> = new Set(['media.generate']);

export interface Warning {
  code: 'DEPRECATED_MODEL';
  message: string;
}

/** What serves a request: the model asked for, the one that answers, the one whose prices are charged. */
export interface Resolution {
  requested: Model;
  served: Model;
  billed: Model;
  /** Response headers to add (retirement and announcement headers); empty for a model in good standing. */
  headers: Record<string, string>;
  /** Set when the request was redirected: goes into the body's `warnings` (first frame only for streams). */
  warning: Warning | null;
}

export interface ModelLookup {
  get(id: string): Model | undefined;
}

export const modelNotFound = (id: string): GatewayError =>
  new GatewayError('model_not_found', `The model '${id}' does not exist.`, { param: 'model', codeA: 'model_not_found', originalId: id });

const isRetired = (model: Model, now: number): boolean => model.retiresAt !== null && now >= model.retiresAt;
const isoDate = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');

/**
 * The one retirement resolver (DESIGN §6). Unknown id → 404 `model_not_found`; a model of another kind → 400;
 * retired with an analogue → the analogue serves (chains followed, cycles stopped), billing stays on the requested model;
 * retired without one → 410 `model_deprecated`, rendered by the error plugin in the endpoint's shape.
 */
export function resolveModel(
  catalog: ModelLookup,
  requestedId: string,
  endpoint: ModelEndpoint,
  kinds: readonly ModelKind[],
  now: number,
): Resolution {
  const requested = catalog.get(requestedId);
  if (!requested) throw modelNotFound(requestedId);
  if (!kinds.includes(requested.kind)) {
    throw invalidParam('model', `'${requestedId}' is a ${requested.kind} model and cannot be used on this endpoint`);
  }
  const base: Resolution = { requested, served: requested, billed: requested, headers: {}, warning: null };
  if (requested.retiresAt === null) return base;
  const sunset = new Date(requested.retiresAt).toUTCString();
  if (!isRetired(requested, now) || NO_RETIREMENT_HANDLING.has(endpoint)) {
    return { ...base, headers: { Sunset: sunset } };
  }

  const seen = new Set<string>([requested.id]);
  let served = requested;
  while (isRetired(served, now)) {
    const nextId = served.deprecation_redirect_to;
    const next = nextId ? catalog.get(nextId) : undefined;
    if (!next || seen.has(next.id) || !kinds.includes(next.kind)) throw modelDeprecated(requested.id, isoDate(requested.retiresAt));
    seen.add(next.id);
    served = next;
  }

  const text =
    `Model '${requested.id}' was retired on ${isoDate(requested.retiresAt)}; ` +
    `this request was served by '${served.id}' and billed as '${requested.id}'.`;
  return {
    requested,
    served,
    billed: requested,
    headers: {
      Deprecation: 'true',
      Sunset: sunset,
      Warning: `299 - "${text}"`,
      'x-model-requested': requested.id,
      'x-model-served': served.id,
    },
    warning: { code: 'DEPRECATED_MODEL', message: text },
  };
}
