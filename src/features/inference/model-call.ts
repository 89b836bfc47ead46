import { GatewayError } from '../../core/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Metrics } from '../../lib/metrics.ts';
import { UpstreamRoute } from '../../providers/channels/upstream-route.ts';
import type { Provider } from '../../providers/provider.ts';
import type { ProviderRegistry } from '../../providers/registry.ts';
import type { AccountRef } from '../accounts/accounts.ts';
import type { BalanceBook } from '../billing/balance-book.ts';
import type { Cost, TokenUsage } from '../billing/pricing.ts';
import type { CatalogService } from '../catalog/catalog-service.ts';
import type { ModelKind } from '../catalog/model.ts';
import { modelNotFound, resolveModel, type ModelEndpoint, type Resolution } from '../catalog/retirement.ts';
import type { KeyLimits } from '../keys/key-limits.ts';
import type { ApiKey } from '../keys/keys.ts';
import type { RequestTrace } from '../usage/request-trace.ts';

/** Who is calling: the authenticated key and the request's id (it goes into the ledger). */
export interface Caller {
  key: ApiKey;
  requestId: string;
  /** The HTTP request's trace (request log, x-tollgate-cost); absent for calls made by background jobs. */
  trace?: RequestTrace | undefined;
}

export interface ModelCall {
  caller: Caller;
  /** What serves and what is billed; a fallback (fallbacks.ts) rebinds it to the model that served. */
  resolution: Resolution;
  /** The canonical-format adapter of the serving model's provider. */
  provider: Provider;
  payer: AccountRef;
  /** The request's way through the channels: handed to every vendor call, read by the request log. */
  route: UpstreamRoute;
}

/** A call authorised and priced but not bound to an adapter (the pass-through endpoint sends its own bytes). */
export type AuthorisedCall = Omit<ModelCall, 'provider'>;

export interface ModelCallDependencies {
  metrics: Metrics;
  catalog: CatalogService;
  providers: ProviderRegistry;
  book: BalanceBook;
  clock: Clock;
  /** The calling key's own spend and tokens-per-minute limits. */
  keyLimits: Pick<KeyLimits, 'checkSpend' | 'countTokens'>;
}

/** A business key charges its organisation unless the request asks for the owner's personal wallet (DESIGN §4). */
export function payerOf(key: ApiKey, useWalletBalance: boolean): AccountRef {
  return key.orgId && !useWalletBalance ? { type: 'org', id: key.orgId } : { type: 'user', id: key.userId };
}

export function checkModelAllowed(key: ApiKey, modelId: string): void {
  if (key.allowedModels !== null && !key.allowedModels.includes(modelId)) {
    throw new GatewayError('model_not_allowed', `The model '${modelId}' is not allowed for this API key.`, { param: 'model', codeA: 'model_not_allowed' });
  }
}

/**
 * Everything a model call needs before it is forwarded, in SPEC's order: the model exists (404), the key may use it (403),
 * retirement (redirect or 410), the key's spend limit for its period is not reached and the paying balance is positive (402).
 */
export function prepareModelCall(
  dependencies: ModelCallDependencies,
  caller: Caller,
  input: { model: string; endpoint: ModelEndpoint; kinds: readonly ModelKind[]; useWalletBalance: boolean },
): Promise<ModelCall> {
  return checkedCall(dependencies, caller, input, true) as Promise<ModelCall>;
}

/** The checks of `prepareModelCall` without choosing an adapter. */
export function authoriseModelCall(
  dependencies: ModelCallDependencies,
  caller: Caller,
  input: { model: string; endpoint: ModelEndpoint; kinds: readonly ModelKind[]; useWalletBalance: boolean; checkBalance?: boolean },
): Promise<AuthorisedCall> {
  return checkedCall(dependencies, caller, input, false);
}

/**
 * Both doors' checks, and the call as one object of one shape: with the serving model's adapter, or with `provider`
 * undefined for a call that sends its own bytes (issue 16: no second object copied from the first on every call).
 */
async function checkedCall(
  dependencies: ModelCallDependencies,
  caller: Caller,
  input: { model: string; endpoint: ModelEndpoint; kinds: readonly ModelKind[]; useWalletBalance: boolean; checkBalance?: boolean },
  withProvider: boolean,
): Promise<AuthorisedCall & { provider: Provider | undefined }> {
  if (!dependencies.catalog.get(input.model)) throw modelNotFound(input.model);
  checkModelAllowed(caller.key, input.model);
  const resolution = resolveModel(dependencies.catalog, input.model, input.endpoint, input.kinds, dependencies.clock.now());
  const payer = payerOf(caller.key, input.useWalletBalance);
  // A call that is not billed (count_tokens) passes neither spend check. Both answer without a promise while this process
  // knows the key's spend and holds a reservation of the balance: nothing is awaited that need not be.
  const billed = input.checkBalance !== false;
  if (billed) {
    const spendChecked = dependencies.keyLimits.checkSpend(caller.key);
    if (spendChecked) await spendChecked;
  }
  caller.trace?.resolved(resolution, payer);
  if (billed) {
    const positive = dependencies.book.isPositive(payer);
    if (!(typeof positive === 'boolean' ? positive : await positive)) {
      throw new GatewayError('insufficient_balance', payer.type === 'org' ? 'Organization balance is too low to use API' : 'Balance is too low to use API');
    }
  }
  const provider = withProvider ? dependencies.providers.get(resolution.served.provider) : undefined;
  return { caller, resolution, payer, route: routeOf(caller, resolution.served.id), provider };
}

/** The request's route (one per request: an assistant's turns add up their attempts), now serving `model`. */
function routeOf(caller: Caller, model: string): UpstreamRoute {
  const trace = caller.trace;
  if (!trace) return new UpstreamRoute(model);
  const route = (trace.route ??= new UpstreamRoute(model));
  route.model = model;
  return route;
}

/** Books the charge of a finished call (no ledger entry for a zero amount) and counts its tokens. */
export function chargeCall(dependencies: ModelCallDependencies, call: AuthorisedCall, cost: Cost, usage: TokenUsage, description: string): void {
  const model = call.resolution.billed.id;
  const input = usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens + usage.cacheWrite1hTokens;
  dependencies.metrics.countTokens(model, input, usage.outputTokens);
  dependencies.keyLimits.countTokens(call.caller.key, input + usage.outputTokens);
  call.caller.trace?.used(usage);
  if (cost.total <= 0n) return;
  dependencies.book.record({
    account: call.payer,
    amount: -cost.total,
    kind: 'charge',
    requestId: call.caller.requestId,
    keyId: call.caller.key.id,
    model,
    description,
  });
}
