/** Tollgate as a library: what receivers and embedders import. */
export { verifySignature, signatureHeader } from './features/webhooks/signature.ts';
export { buildApp, createServices } from './app.ts';
export type { App, AppDependencies, Services } from './app.ts';
