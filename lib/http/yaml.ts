// The YAML parser for request bodies, in a module of its own that body.ts loads with
// `await import()` at the first YAML body: an agent that is sent JSON never loads the yaml package,
// which the serve script requires from a file of its own (scripts/build.mjs). A dynamic import of
// the package itself would give only its CommonJS default in the bundle's chunks.
export { parse as parseYaml } from 'yaml';
