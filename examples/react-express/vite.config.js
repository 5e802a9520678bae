import { defineConfig } from 'vite';

// Built at install (`prepare`); server.js serves dist/ and the API on one origin.
export default defineConfig({ build: { outDir: 'dist', emptyOutDir: true } });
