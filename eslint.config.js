// Lint config: strict type-aware rules; `npm run lint` fails on any warning.
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import layers from "./tools/eslint-layers.js";

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "reports/", "allure-results/", "allure-report/"] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ["*.js", "bin/*.js", "tools/*.js"] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/restrict-template-expressions": [
        "error",
        { allowNumber: true, allowBoolean: true },
      ],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/no-unnecessary-condition": ["error", { allowConstantLoopConditions: true }],
      // @kubernetes/client-node declares its API objects as classes but sends and accepts plain
      // JSON objects; building them as literals is the library's intended use.
      "@typescript-eslint/no-unsafe-class-instance-assignment": "off",
      "@typescript-eslint/no-misused-spread": "off",
    },
  },
  {
    // Layering: a file imports only its own layer or a lower one (the table is in tools/eslint-layers.js).
    files: ["lib/**/*.ts", "suites/**/*.ts", "bench/**/*.ts", "test/**/*.ts", "tools/**/*.ts"],
    plugins: { rekindle: layers },
    rules: { "rekindle/layers": "error" },
  },
  {
    // Rooms that stay small: a file past ~400 lines holds more than one concept, a function past
    // these caps more than one step. Split by concept, not into arbitrary halves.
    files: [
      "lib/**/*.ts",
      "suites/**/*.ts",
      "bench/**/*.ts",
      "tools/**/*.ts",
      "tools/**/*.js",
      "test/**/*.ts",
    ],
    rules: {
      "max-lines": ["error", { max: 400, skipBlankLines: true, skipComments: true }],
      "max-lines-per-function": ["error", { max: 120, skipBlankLines: true, skipComments: true }],
      complexity: ["error", 20],
    },
  },
  {
    // Tests keep the file and complexity caps, not the function one: a describe() callback is a
    // list of cases of one subject, each its own it(); its length is the number of cases.
    files: ["test/**/*.ts"],
    rules: { "max-lines-per-function": "off" },
  },
  {
    files: ["**/*.js"],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { globals: { process: "readonly", console: "readonly", URL: "readonly" } },
  },
  {
    files: ["**/*.cjs"],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      sourceType: "commonjs",
      parserOptions: { projectService: false },
      globals: { process: "readonly", require: "readonly", module: "writable" },
    },
    rules: { ...tseslint.configs.disableTypeChecked.rules, "@typescript-eslint/no-require-imports": "off" },
  },
  {
    files: ["test/**/*.ts", "suites/**/*.ts"],
    rules: {
      // chai's `expect(x).to.be.true` style reads as an unused expression.
      "@typescript-eslint/no-unused-expressions": "off",
      "@typescript-eslint/no-non-null-assertion": "off",
      // `not.include.members([a, b])` fails only when every name is present: one left behind
      // passes. Check each name on its own (expectNoneOf in test/support/assertions.ts).
      "no-restricted-syntax": [
        "error",
        ...["include", "contain", "includes", "contains"].flatMap((word) => [
          {
            selector: `MemberExpression[property.name='members'][object.property.name='${word}'][object.object.property.name='not']`,
            message: "not.include.members passes while one of the names is present: use expectNoneOf",
          },
          {
            selector: `MemberExpression[property.name='members'][object.property.name='${word}'][object.object.property.name=/^(to|be|been|is|that|which|and|has|have|with|at|of|same|but|does|still|also)$/][object.object.object.property.name='not']`,
            message: "not.include.members passes while one of the names is present: use expectNoneOf",
          },
        ]),
      ],
    },
  },
);
