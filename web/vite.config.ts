// The web UI's build: `npm run build` writes dist/web, which `hangar up` serves at `/`. During UI work,
// `npx vite web` serves it with hot reload and passes API calls to a daemon on the default port.
import { fileURLToPath } from 'node:url'
import react from '@vitejs/plugin-react'
import { defineConfig } from 'vite'

const daemon = process.env.HANGAR_URL ?? 'http://127.0.0.1:7456'

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    reportCompressedSize: false,
  },
  server: { proxy: { '/api': daemon, '/login': daemon } },
})
