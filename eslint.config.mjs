// ESLint decides what review should not have to: promises nobody awaits, casts that lie about a
// type, unused names. Type-aware rules read the project through tsconfig.json (typescript-eslint
// needs TypeScript's compiler API, which is why the project's TypeScript is 6.x and not 7).
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

/** What the console's modules use of the browser (console/). */
const BROWSER_GLOBALS = [
  'window',
  'document',
  'location',
  'sessionStorage',
  'fetch',
  'URL',
  'URLSearchParams',
  'setTimeout',
  'clearTimeout',
  'console',
  'CustomEvent',
  'AbortController',
  'HTMLElement',
  'TextDecoderStream',
  'CSS',
  'Node',
  'history',
  'ResizeObserver',
  'FormData',
];

export default tseslint.config(
  { ignores: ['node_modules/**', 'data/**', 'coverage/**', 'dist/**'] },
  eslint.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // A promise nobody awaits loses its error and its order.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      // A cast that narrows a type is a claim the compiler cannot check: parse or narrow instead.
      '@typescript-eslint/no-unsafe-type-assertion': 'error',
      '@typescript-eslint/no-unnecessary-type-assertion': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
  {
    // Tests and benchmarks read answers they have just asked for; their casts are the assertion.
    files: ['test/**', 'bench/**'],
    rules: { '@typescript-eslint/no-unsafe-type-assertion': 'off' },
  },
  {
    files: ['**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // Scripts run by Node itself (the build, thread bootstraps).
    files: ['bin/**/*.mjs', 'infra/**/*.mjs'],
    languageOptions: { globals: { console: 'readonly', performance: 'readonly', process: 'readonly' } },
  },
  {
    // The web console's browser modules: plain JavaScript with JSDoc types, which `tsc -p console`
    // checks; here without type information, with the browser's globals.
    files: ['console/**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      sourceType: 'module',
      parserOptions: { projectService: false, project: false },
      globals: Object.fromEntries(BROWSER_GLOBALS.map((name) => [name, 'readonly'])),
    },
    rules: { ...tseslint.configs.disableTypeChecked.rules, 'no-undef': 'error' },
  },
);
