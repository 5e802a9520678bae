import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// Built at install (`prepare`) into dist/, which the server serves at /console. The SDKs are taken
// from their sources, so the build needs no other package built first.
export default defineConfig({
  base: '/console/',
  define: { 'process.env.NODE_ENV': '"production"' },
  resolve: {
    alias: {
      '@gatehouse/react': fileURLToPath(new URL('../react/src/index.ts', import.meta.url)),
      '@gatehouse/js': fileURLToPath(new URL('../js/src/index.ts', import.meta.url)),
    },
  },
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false, modulePreload: false },
});
