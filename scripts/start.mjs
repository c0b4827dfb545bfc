#!/usr/bin/env node
// `npm start`: Outpost on its embedded defaults with the sample manifests, after scripts/prepare.mjs
// (dependencies, build, a runtime: $OUTPOST_RUNTIME_ENDPOINT, the system containerd, or the lab it
// starts). Extra arguments go to `outpost serve`; `--runtime=deno` or `--runtime=bun` (npm run
// start:deno, start:bun) runs the same bundle on Deno or Bun from their npm packages instead of node.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { prepare, ROOT } from './prepare.mjs';

const bin = (name) => join(ROOT, 'node_modules', '.bin', name);
const RUNTIMES = { node: [process.execPath], deno: [bin('deno'), 'run', '-A'], bun: [bin('bun')] };
const flag = process.argv.find((a) => a.startsWith('--runtime='));
const runtime = flag?.slice('--runtime='.length) ?? 'node';
if (!RUNTIMES[runtime]) {
  process.stderr.write(`start: --runtime must be node, deno or bun (got ${runtime})\n`);
  process.exit(2);
}

let env;
try {
  env = prepare('start');
} catch (e) {
  process.stderr.write(`${e.message}\n`);
  process.exit(1);
}
const [command, ...prefix] = RUNTIMES[runtime];
const serveArgs = process.argv.slice(2).filter((a) => a !== flag);
// Node's entry on Node; Deno and Bun run the ES module entry (docs/runtimes.md).
const entry = runtime === 'node' ? 'dist/outpost.cjs' : 'dist/outpost.mjs';
const args = [...prefix, entry, 'serve', '--manifests', 'examples/manifests', ...serveArgs];
process.stderr.write(`start: ${runtime} ${args.join(' ')} (runtime ${env.OUTPOST_RUNTIME_ENDPOINT})\n`);
const child = spawn(command, args, { cwd: ROOT, stdio: 'inherit', env: { ...process.env, ...env } });
for (const s of ['SIGINT', 'SIGTERM']) process.on(s, () => child.kill(s));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
