import { defineConfig } from 'vite';

// The react-express example's page, but every `react` and `react-dom` import (the components'
// too) resolves to this package's own React 18, not the workspace's React 19.
export default defineConfig({
  resolve: { dedupe: ['react', 'react-dom'] },
  build: { outDir: 'dist', emptyOutDir: true },
});
