// The console's build: one single-page app, emitted with relative asset URLs so the same files serve under
// /console/ (control plane) and /studio/ (graphx dev); the server adds the page's <base href>.
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  base: './',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // Each file is named by its content: the server can let browsers keep assets for a long time.
    assetsDir: 'assets',
    sourcemap: false,
    reportCompressedSize: false,
    chunkSizeWarningLimit: 600,
  },
  // `npm run dev -w packages/console`: the control plane at GRAPHX_API_URL answers /v2 (same origin through the proxy).
  server: {
    proxy: { '/v2': process.env.GRAPHX_API_URL ?? 'http://127.0.0.1:8080' },
  },
});
