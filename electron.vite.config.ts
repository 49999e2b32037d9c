import { resolve } from 'node:path';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'electron-vite';
import type { Plugin } from 'vite';

/**
 * The dev server only (`npm start`): Vite puts each imported stylesheet in a
 * <style> element it writes from script, which index.html's policy (no
 * 'unsafe-inline') refuses, so the page would show unstyled. Dev pages get
 * 'unsafe-inline' for styles; the built page (app://, `warden serve`) keeps the
 * strict policy, the same as src/main/app/window.ts's CONTENT_SECURITY_POLICY.
 */
function devStylePolicy(): Plugin {
  return {
    name: 'warden:dev-style-policy',
    apply: 'serve',
    transformIndexHtml(html) {
      const relaxed = html.replace(/(http-equiv="Content-Security-Policy"\s+content="[^"]*style-src 'self')/, "$1 'unsafe-inline'");
      if (relaxed === html) throw new Error("index.html's Content-Security-Policy meta tag has no style-src 'self' to relax for the dev server.");
      return relaxed;
    },
  };
}

export default defineConfig({
  main: {
    build: {
      externalizeDeps: true,
      rollupOptions: { input: { index: resolve(__dirname, 'src/main/app/index.ts') } },
    },
  },
  preload: {
    build: {
      externalizeDeps: true,
      rollupOptions: {
        input: { index: resolve(__dirname, 'src/preload/index.ts') },
        // A sandboxed preload must be CommonJS.
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
  renderer: {
    root: resolve(__dirname, 'src/renderer'),
    plugins: [react(), devStylePolicy()],
    build: {
      rollupOptions: { input: resolve(__dirname, 'src/renderer/index.html') },
      // electron-vite leaves the renderer unminified: a browser logging in through `warden serve`
      // downloads, parses and compiles it all before the first Runs row (1 MB, half of it React's).
      minify: true,
      // One stylesheet, in the order the views import theirs, whichever view's script loads first.
      cssCodeSplit: false,
    },
  },
});
