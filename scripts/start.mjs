#!/usr/bin/env node
// `npm start`: Outpost on its embedded defaults with the sample manifests, after scripts/prepare.mjs
// (dependencies, build, a runtime: $OUTPOST_RUNTIME_ENDPOINT, the system containerd, or the lab it
// starts). Extra arguments go to `outpost serve`.
import { spawn } from 'node:child_process';
import { prepare, ROOT } from './prepare.mjs';

let env;
try {
  env = prepare('start');
} catch (e) {
  process.stderr.write(`${e.message}\n`);
  process.exit(1);
}
const args = ['dist/outpost.mjs', 'serve', '--manifests', 'examples/manifests', ...process.argv.slice(2)];
process.stderr.write(`start: node ${args.join(' ')} (runtime ${env.OUTPOST_RUNTIME_ENDPOINT})\n`);
const child = spawn(process.execPath, args, { cwd: ROOT, stdio: 'inherit', env: { ...process.env, ...env } });
for (const s of ['SIGINT', 'SIGTERM']) process.on(s, () => child.kill(s));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
