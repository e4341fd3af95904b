import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'bench/results/', '*.config.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    // One TypeScript program for everything tsconfig.json includes (functions/src, test, tools, bench).
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-require-imports': 'off',
      // typeof import('x') types lazy require()s, which keep SDKs out of cold starts.
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false },
      ],
      '@typescript-eslint/no-unnecessary-condition': 'error',
      // A `default:` does not count: a new member of a union must get its own case (or a reasoned one).
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      // Off: an async function without await is how this code implements a Promise-returning interface
      // (CliIo.confirm, the test fakes of Engine and the queue), and `async` is what turns their throws
      // into rejections, which the callers count on.
      '@typescript-eslint/require-await': 'off',
      eqeqeq: ['error', 'always'],
      'max-lines': ['warn', { max: 400, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    // In tests `any` comes from three places only: supertest's `res.body`, Firestore's DocumentData and
    // jest's asymmetric matchers (expect.any(), expect.stringContaining() are typed any). Each value ends in
    // an expect(), which checks it at run time; a cast per use would add unchecked assertions, not safety.
    files: ['test/**/*.ts', 'packages/*/test/**/*.ts', 'examples/*/test/**/*.ts'],
    rules: {
      // A test file is its cases' tables and scenarios, one subject per file: longer than a module may be.
      'max-lines': ['warn', { max: 700, skipBlankLines: true, skipComments: true }],
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // The console page runs in the browser (console-ui/tsconfig.json: DOM). Its tsconfig lets Node's
    // types in only because the API types it imports reach into functions/src; the page itself must
    // not use Node's globals, which would type-check and then fail in the browser.
    files: ['console-ui/src/**/*.ts'],
    rules: {
      'no-restricted-globals': [
        'error',
        'process',
        'Buffer',
        'require',
        '__dirname',
        '__filename',
        'global',
        'module',
        'setImmediate',
      ],
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['node:*'], message: 'Browser code: no Node modules.' }] },
      ],
    },
  },
  {
    // Plain JavaScript is outside the TypeScript program: no type information to lint with.
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // Plain CommonJS fixtures run by the Functions Framework CLI.
    files: ['**/*.js'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', process: 'readonly', module: 'writable' },
    },
  },
);
