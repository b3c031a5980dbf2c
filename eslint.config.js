// Lint: ESLint's and typescript-eslint's recommended rules; formatting is Prettier's (npm run format).
import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      // TypeScript checks names in .ts files; these are the Node globals the plain .mjs scripts use.
      globals: Object.fromEntries(
        [
          'process',
          'console',
          'URL',
          'performance',
          'fetch',
          'setTimeout',
          'clearTimeout',
          'Buffer',
          'TextDecoder',
          'AbortSignal',
          'Headers',
        ].map((name) => [name, 'readonly']),
      ),
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
      'no-empty': ['error', { allowEmptyCatch: true }],
    },
  },
  {
    // The web UI's service worker is plain JavaScript run by the browser.
    files: ['web/public/**/*.js'],
    languageOptions: {
      globals: Object.fromEntries(
        ['self', 'caches', 'fetch', 'URL', 'Promise'].map((name) => [name, 'readonly']),
      ),
    },
  },
)
