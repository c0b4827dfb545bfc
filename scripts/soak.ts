// `npm run soak`: the kill -9 loop of test/e2e/kill-loop.test.ts for longer, printing a line per
// round. OUTPOST_SOAK_ITERATIONS rounds (default 50) on the containerd lab (started if needed, in
// $OUTPOST_LAB_DIR or .lab/lab); exits 1 at the first round that finds damage or a lost write.
import { runKillLoop } from '../test/helpers/kill-loop.ts';
import { ensureBundle } from '../test/helpers/outpost-process.ts';
import { startLab } from './lab.ts';

const iterations = Number(process.env.OUTPOST_SOAK_ITERATIONS ?? 50);
if (!Number.isInteger(iterations) || iterations < 1) {
  process.stderr.write(
    `OUTPOST_SOAK_ITERATIONS=${process.env.OUTPOST_SOAK_ITERATIONS}: expected a positive integer\n`,
  );
  process.exit(2);
}
ensureBundle();
const lab = await startLab({ log: (l) => process.stdout.write(`lab: ${l}\n`) });
const started = Date.now();
try {
  const r = await runKillLoop({
    lab,
    iterations,
    progress: (line) => process.stdout.write(`${new Date().toISOString()} ${line}\n`),
  });
  process.stdout.write(
    `soak passed: ${r.rounds} kill -9 rounds, ${r.restartsAcked} restarts and ${r.editsAcked} device edits ` +
      `acknowledged, none lost, integrity ok every time (${Math.round((Date.now() - started) / 1000)} s)\n`,
  );
} catch (e) {
  process.stdout.write(`soak FAILED: ${(e as Error).message}\n`);
  process.exitCode = 1;
} finally {
  await lab.stop();
}
