// @ts-check
/**
 * The web client's build: web/ → web/dist (index.html + content-hashed assets/), served by
 * every node (src/edge/http/web-client.ts). `npm run dev:web` serves it with hot reload and
 * forwards the API and /ws to a node on :8080.
 */
import { fileURLToPath } from 'node:url';
import vue from '@vitejs/plugin-vue';
import { defineConfig } from 'vite';

const node = process.env.ROOMS_WEB_DEV_NODE ?? 'http://127.0.0.1:8080';

export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  plugins: [vue()],
  resolve: {
    // The page is built on the client SDK of this repository, from its sources. An alias
    // matches by prefix, the first that matches wins: the media subpath comes first.
    alias: {
      '@echochat/client/media': fileURLToPath(
        new URL('../packages/client/src/media/index.ts', import.meta.url),
      ),
      '@echochat/client': fileURLToPath(
        new URL('../packages/client/src/index.ts', import.meta.url),
      ),
    },
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    target: 'es2022',
    chunkSizeWarningLimit: 600,
  },
  server: {
    proxy: {
      '/api': node,
      '/ws': { target: node, ws: true },
    },
  },
});
