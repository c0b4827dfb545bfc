// The YAML parser for manifests, in a module of its own that parse.ts loads with `await import()`
// the first time a file is not plain JSON: an agent whose manifests are JSON never loads the yaml
// package, which the serve script requires from a file of its own (scripts/build.mjs). A dynamic
// import of the package itself would give only its CommonJS default in the bundle's chunks.
export { Composer, Lexer, LineCounter, Parser } from 'yaml';
