import { defineConfig } from 'vite';

// The hosted pages' script: React and the components in one file the server serves as is.
export default defineConfig({
  define: { 'process.env.NODE_ENV': '"production"' },
  build: {
    outDir: 'dist-hosted',
    emptyOutDir: true,
    lib: { entry: 'src/hosted/main.tsx', formats: ['es'], fileName: () => 'hosted.js' },
    sourcemap: false,
    minify: true,
  },
});
