import { z } from 'zod';

/**
 * The `POST /v1/responses` request (openai-node src/resources/responses/responses.ts, ResponseCreateParams). The gateway
 * checks the fields it reads and their types; the rest passes through untouched for OpenAI models (the vendor judges
 * them). The exact shapes of input items and tools are the translator's to check (responses-to-chat.ts), for Claude.
 * `useWalletBalance` is the gateway's own and is removed before forwarding.
 */
export const responsesRequestSchema = z.looseObject({
  model: z.string().min(1, 'must not be empty'),
  input: z.union([z.string(), z.array(z.looseObject({}))]).optional(),
  instructions: z.string().nullish(),
  tools: z.array(z.looseObject({ type: z.string() })).nullish(),
  tool_choice: z.union([z.enum(['none', 'auto', 'required']), z.looseObject({ type: z.string() })]).nullish(),
  max_output_tokens: z.number().int().positive().nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  stream: z.boolean().nullish(),
  store: z.boolean().nullish(),
  previous_response_id: z.string().min(1).nullish(),
  metadata: z.record(z.string(), z.string()).nullish(),
  text: z.looseObject({ format: z.looseObject({ type: z.string() }).optional() }).nullish(),
  reasoning: z.looseObject({ effort: z.string().nullish(), summary: z.string().nullish() }).nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  user: z.string().nullish(),
  safety_identifier: z.string().nullish(),
  include: z.array(z.string()).nullish(),
  truncation: z.enum(['auto', 'disabled']).nullish(),
  useWalletBalance: z.boolean().optional(),
});

export type ResponsesRequest = z.output<typeof responsesRequestSchema>;

/** Splits the gateway's own option off the body. */
export function toResponsesRequest(parsed: ResponsesRequest): { request: ResponsesRequest; useWalletBalance: boolean } {
  const { useWalletBalance, ...request } = parsed;
  return { request: request as ResponsesRequest, useWalletBalance: useWalletBalance === true };
}
