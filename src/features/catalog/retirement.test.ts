import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GatewayError } from '../../core/errors.ts';
import { completeModel, modelSchema, type Model, type ModelInput } from './model.ts';
import { resolveModel } from './retirement.ts';

const NOW = Date.parse('2026-06-01T00:00:00Z');

function catalog(...inputs: ModelInput[]): { get(id: string): Model | undefined } {
  const models = new Map(inputs.map((input) => [input.id, completeModel(modelSchema.parse(input), 'openai', 0)]));
  return { get: (id) => models.get(id) };
}

const chat = (id: string, extra: Partial<ModelInput> = {}): ModelInput => ({ id, kind: 'chat', provider: 'openai', ...extra });

function expectError(fn: () => unknown, code: string, status: number): GatewayError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof GatewayError);
    assert.equal(error.code, code);
    assert.equal(error.status, status);
    return error;
  }
  assert.fail('expected an error');
}

test('a model in good standing serves itself with no headers', () => {
  const result = resolveModel(catalog(chat('a')), 'a', 'chat.completions', ['chat'], NOW);
  assert.equal(result.served.id, 'a');
  assert.deepEqual(result.headers, {});
  assert.equal(result.warning, null);
});

test('an announced retirement only adds Sunset', () => {
  const result = resolveModel(catalog(chat('a', { deprecated_at: '2026-07-01T00:00:00Z', deprecation_redirect_to: 'b' }), chat('b')), 'a', 'chat.completions', ['chat'], NOW);
  assert.equal(result.served.id, 'a');
  assert.deepEqual(result.headers, { Sunset: 'Wed, 01 Jul 2026 00:00:00 GMT' });
});

test('a retired model is served by its analogue and billed as itself', () => {
  const result = resolveModel(catalog(chat('a', { deprecated_at: '2026-05-01T00:00:00Z', deprecation_redirect_to: 'b' }), chat('b')), 'a', 'chat.completions', ['chat'], NOW);
  assert.equal(result.served.id, 'b');
  assert.equal(result.billed.id, 'a');
  assert.equal(result.headers.Deprecation, 'true');
  assert.equal(result.headers.Sunset, 'Fri, 01 May 2026 00:00:00 GMT');
  assert.equal(result.headers['x-model-requested'], 'a');
  assert.equal(result.headers['x-model-served'], 'b');
  assert.equal(result.headers.Warning, `299 - "${result.warning?.message}"`);
  assert.match(result.warning!.message, /'a'.*'b'.*billed as 'a'/);
});

test('chains are followed to the first model still in service', () => {
  const models = catalog(
    chat('a', { deprecated_at: '2026-01-01T00:00:00Z', deprecation_redirect_to: 'b' }),
    chat('b', { deprecated_at: '2026-02-01T00:00:00Z', deprecation_redirect_to: 'c' }),
    chat('c'),
  );
  assert.equal(resolveModel(models, 'a', 'embeddings', ['chat'], NOW).served.id, 'c');
});

test('cycles, missing analogues and analogues of another kind answer 410', () => {
  const cycle = catalog(
    chat('a', { deprecated_at: '2026-01-01T00:00:00Z', deprecation_redirect_to: 'b' }),
    chat('b', { deprecated_at: '2026-01-01T00:00:00Z', deprecation_redirect_to: 'a' }),
  );
  const error = expectError(() => resolveModel(cycle, 'a', 'chat.completions', ['chat'], NOW), 'model_deprecated', 410);
  assert.equal(error.param, 'model');
  assert.equal(error.codeA, 'model_deprecated');
  expectError(() => resolveModel(catalog(chat('a', { deprecated_at: '2026-01-01T00:00:00Z' })), 'a', 'chat.completions', ['chat'], NOW), 'model_deprecated', 410);
  const crossKind = catalog(chat('a', { deprecated_at: '2026-01-01T00:00:00Z', deprecation_redirect_to: 'e' }), { id: 'e', kind: 'embedding', provider: 'openai' });
  expectError(() => resolveModel(crossKind, 'a', 'chat.completions', ['chat'], NOW), 'model_deprecated', 410);
});

test('media.generate neither redirects nor refuses (SPEC 9.6)', () => {
  const models = catalog({ id: 'm', kind: 'media', provider: 'openai', deprecated_at: '2026-01-01T00:00:00Z', deprecation_redirect_to: null });
  const result = resolveModel(models, 'm', 'media.generate', ['media'], NOW);
  assert.equal(result.served.id, 'm');
  assert.equal(result.warning, null);
});

test('unknown ids are 404 and models of another kind are 400', () => {
  expectError(() => resolveModel(catalog(), 'nope', 'chat.completions', ['chat'], NOW), 'model_not_found', 404);
  expectError(() => resolveModel(catalog({ id: 'e', kind: 'embedding', provider: 'openai' }), 'e', 'chat.completions', ['chat'], NOW), 'invalid_request', 400);
});
