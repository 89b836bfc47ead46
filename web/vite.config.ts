import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/** The gateway `npm run dev:web` proxies to (its API, sessions and model endpoints). */
const gateway = process.env.TOLLGATE_DEV_GATEWAY ?? 'http://127.0.0.1:8080';

export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // The gateway serves assets/ with a year's immutable caching: every file name carries its content hash.
    assetsDir: 'assets',
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: false,
    modulePreload: { polyfill: false },
  },
  server: {
    proxy: Object.fromEntries(['/api', '/v1', '/admin', '/healthz', '/readyz'].map((path) => [path, { target: gateway, changeOrigin: false }])),
  },
});
