// The yaml package, in a module of its own that its users load with `await import()` when they
// first meet YAML: a request body (lib/http/body.ts) or a manifest file that is not plain JSON
// (lib/manifests/parse.ts). An agent that only sees JSON never loads the package, which the serve
// script requires from a file of its own (scripts/build.mjs). A dynamic import of the package
// itself would give only its CommonJS default in the bundle's chunks.
export { Composer, Lexer, LineCounter, Parser, parse } from 'yaml';
