import { defineConfig } from 'vite';

// The hosted pages' script: React and the components in one minified file the server serves as is.
export default defineConfig({
  define: { 'process.env.NODE_ENV': '"production"' },
  build: {
    outDir: 'dist-hosted',
    emptyOutDir: true,
    sourcemap: false,
    modulePreload: false,
    rollupOptions: { input: 'src/hosted/main.tsx', output: { format: 'es', entryFileNames: 'hosted.js', inlineDynamicImports: true } },
  },
});
