import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The linter `npm test` runs before the tests: ESLint's recommended rules and typescript-eslint's
 * type-aware recommended rules (floating and misused promises, awaiting a non-promise, throwing a
 * non-error, stringifying an object...), with the changes below. Each rule turned off says why.
 * Type-aware rules need the program the compiler builds: `projectService` builds it once from
 * tsconfig.json, which is why the lint takes about as long as `tsc --noEmit` and runs beside it.
 */
export default tseslint.config(
  // The few plain JavaScript files (start-up shims, worker entry points) are outside the compiler's
  // program, which the type-aware rules need.
  { ignores: ['node_modules/', '.state/', 'coverage/', '.scratch/', '**/*.js', '**/*.mjs'] },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // A promise returned inside `try` must be awaited there, or its rejection escapes the `catch` and its `finally` runs too early.
      '@typescript-eslint/return-await': ['error', 'error-handling-correctness-only'],
      // A `switch` over a union handles every member, or says what the others do in a `default`.
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // A name starting with `_` is unused on purpose (a parameter kept for its position, a property left out of a rest).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      // Rethrowing what a `catch` received (typed `unknown`) is right: it was thrown by someone else.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      // Node's URLSearchParams renders as a query string, as the web's does (which the rule allows).
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        { allow: [{ from: 'lib', name: ['Error', 'URL', 'URLSearchParams'] }, { from: 'package', package: 'url', name: ['URL', 'URLSearchParams'] }] },
      ],
      // A value narrowed from `unknown` to `{}` (neither null nor undefined) is no more an object
      // than `unknown` is, which the rule leaves alone; the rule's other defaults stay.
      '@typescript-eslint/no-base-to-string': ['error', { ignoredTypeNames: ['Error', 'RegExp', 'URL', 'URLSearchParams', '{}'] }],

      // Off: the no-unsafe-* family and no-explicit-any flag every use of a value typed `any`. The
      // tests read JSON response bodies as `any` (about 3,700 findings) and the source reads parsed
      // JSON and library values the same way (about 200): a way of typing the boundary, not defects.
      // The compiler's strict mode and the schemas that parse every input cover what they would.
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      // Off: an `async` function without `await` keeps a promise-returning signature, so that its
      // throws become rejections; dropping `async` to please the rule would change that.
      '@typescript-eslint/require-await': 'off',
      // Off: services are closures built by factories (`createXService(deps)`) and never use
      // `this`, so passing one of their functions on is right; the rule flags each such use as if
      // it were a class method (24 findings, none a defect).
      '@typescript-eslint/unbound-method': 'off',
      // Not on: no-unnecessary-condition (about 150 findings) flags the defensive checks on values
      // whose declared type is narrower than what arrives at run time (JSON bodies, Kubernetes
      // objects, rows); consistent-type-imports adds nothing to the compiler's
      // `verbatimModuleSyntax`, which already requires `import type` for types.
    },
  },
);
