import { UpstreamError } from '../../providers/upstream-error.ts';
import type { Model } from '../catalog/model.ts';
import type { ModelCallDependencies } from './model-call.ts';
import type { AuthorisedCall, ModelCall } from './model-call.ts';

/** Whether a failure means the model could not be reached at all (every channel failed or none was available). */
export const unreachable = (error: unknown): error is UpstreamError => error instanceof UpstreamError && error.failsOver;

/**
 * The models that may serve instead of the call's served model, in the operator's order (`fallbacks` on the model, admin
 * API): those that exist, are of the same kind, are not retired, and that the calling key may use.
 */
export function fallbackModels(dependencies: Pick<ModelCallDependencies, 'catalog' | 'clock'>, call: AuthorisedCall, accepts: (model: Model) => boolean = () => true): Model[] {
  const served = call.resolution.served;
  const allowed = call.caller.key.allowedModels;
  const now = dependencies.clock.now();
  const models: Model[] = [];
  for (const id of served.fallbacks ?? []) {
    const model = dependencies.catalog.get(id);
    if (!model || model.kind !== served.kind || (model.retiresAt !== null && now >= model.retiresAt)) continue;
    if (allowed !== null && !allowed.includes(model.id)) continue;
    if (accepts(model)) models.push(model);
  }
  return models;
}

/**
 * Rebinds a call to a fallback model: it serves and is billed (DESIGN §12: billed at the model that served); the request log
 * shows it as servedModel, with the provider and channel that answered and the attempts of every model tried.
 */
export function rebindToFallback<Call extends AuthorisedCall>(call: Call, model: Model): void {
  call.resolution = { ...call.resolution, served: model, billed: model };
  call.route.fallBackTo(model.id);
  call.caller.trace?.resolved(call.resolution, call.payer);
}

/**
 * Runs `attempt` for the call's model and, while the model cannot be reached, for each of its fallbacks in turn (the call
 * rebound to it; `rebind` points the rest — the adapter, the body — at it). The last failure is thrown when none serves.
 * Nothing is charged until an attempt returns: the charge follows the call's resolution as it is then. A model without
 * fallbacks (most of them) runs its one attempt as it is, with no wrapper around it: it is on every model call's path.
 */
export function withFallbacks<T, Call extends AuthorisedCall>(
  dependencies: Pick<ModelCallDependencies, 'catalog' | 'clock'>,
  call: Call,
  attempt: () => Promise<T>,
  options: { rebind: (model: Model) => void; accepts?: (model: Model) => boolean },
): Promise<T> {
  if (!call.resolution.served.fallbacks?.length) return attemptOnce(attempt);
  return attemptWithFallbacks(dependencies, call, attempt, options);
}

/** `attempt()`, with a synchronous throw turned into a rejection as an async function would. */
function attemptOnce<T>(attempt: () => Promise<T>): Promise<T> {
  try {
    return attempt();
  } catch (error) {
    return Promise.reject(error);
  }
}

async function attemptWithFallbacks<T, Call extends AuthorisedCall>(
  dependencies: Pick<ModelCallDependencies, 'catalog' | 'clock'>,
  call: Call,
  attempt: () => Promise<T>,
  options: { rebind: (model: Model) => void; accepts?: (model: Model) => boolean },
): Promise<T> {
  try {
    return await attempt();
  } catch (error) {
    if (!unreachable(error)) throw error;
    let last: unknown = error;
    for (const model of fallbackModels(dependencies, call, options.accepts)) {
      rebindToFallback(call, model);
      options.rebind(model);
      try {
        return await attempt();
      } catch (next) {
        if (!unreachable(next)) throw next;
        last = next;
      }
    }
    throw last;
  }
}

/** `withFallbacks` for a canonical-format call: a fallback's provider adapter replaces the call's. */
export function withModelFallbacks<T>(dependencies: Pick<ModelCallDependencies, 'catalog' | 'clock' | 'providers'>, call: ModelCall, attempt: () => Promise<T>): Promise<T> {
  if (!call.resolution.served.fallbacks?.length) return attemptOnce(attempt);
  return attemptWithFallbacks(dependencies, call, attempt, {
    rebind: (model) => {
      call.provider = dependencies.providers.get(model.provider);
    },
  });
}
