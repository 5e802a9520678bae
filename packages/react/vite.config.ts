import { defineConfig } from 'vite';

// Library mode: one ESM file; React and @gatehouse/js stay the application's own copies.
export default defineConfig({
  build: {
    lib: { entry: 'src/index.ts', formats: ['es'], fileName: 'index' },
    rollupOptions: { external: ['react', 'react-dom', 'react/jsx-runtime', 'react-dom/client', '@gatehouse/js'] },
    sourcemap: true,
    emptyOutDir: true,
  },
});
