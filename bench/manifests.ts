// npm run bench:manifests — what one manifest file costs the agent's memory (issue 18): the bundled
// agent runs with a manifests directory of ordinary files; then, one at a time, a file at each of
// the limits (lib/manifests/limits.ts) and each hostile file of the issue is dropped beside them.
// For each: the agent's RSS before, its peak while the file is handled (VmHWM, reset through
// /proc/PID/clear_refs) and after, as the growth over the anchor: the same agent loading an
// ordinary three-object manifest, measured in the same run. Nothing listens on the runtime
// endpoint, so only the manifests module works.
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MANIFEST_LIMITS } from '#lib/manifests/limits.ts';
import { aliasBomb, configMaps, manyObjects, podManifest } from '../test/helpers/manifests.ts';
import { spawnOutpost } from '../test/helpers/outpost-process.ts';
import { printTable } from './lib.ts';

const dir = mkdtempSync(join(tmpdir(), 'outpost-bench-manifests-'));
const manifests = join(dir, 'manifests');

function memory(pid: number): { rss: number; peak: number } {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(s)?.[1] ?? Number.NaN) / 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

async function until(what: string, ok: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  for (const end = Date.now() + timeoutMs; !(await ok()); await new Promise((r) => setTimeout(r, 100)))
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
}

async function main() {
  mkdirSync(manifests);
  for (let i = 0; i < 5; i++) writeFileSync(join(manifests, `pod-${i}.yaml`), podManifest(`pod-${i}`));
  const agent = await spawnOutpost({
    dataDir: join(dir, 'data'),
    runtimeEndpoint: `unix://${join(dir, 'no-runtime.sock')}`,
    nodeName: 'bench',
    manifests,
  });
  const get = (path: string) =>
    fetch(agent.url + path).then((r) => r.json() as Promise<Record<string, unknown>>);
  const count = async (path: string) => ((await get(path)).items as unknown[]).length;
  const skipped = (file: string) =>
    agent
      .logs()
      .split('\n')
      .some((l) => l.includes('"manifest skipped"') && l.includes(file));
  // Waits read the agent's log, not the API: listing megabytes of ConfigMaps would be what is measured.
  const syncs = () =>
    agent
      .logs()
      .split('\n')
      .filter((l) => l.includes('"manifests synced"')).length;
  const synced = () => {
    const before = syncs();
    return async () => syncs() > before;
  };
  const rows: string[][] = [];
  try {
    await until('the pods', async () => (await count('/api/v1/pods')) === 5);
    // Warm up the read path and let the start-up garbage go.
    for (let i = 0; i < 50; i++) await get('/api/v1/pods');
    await new Promise((r) => setTimeout(r, 3000));
    let anchor = Number.NaN;
    const cases: Array<[string, string, (file: string) => void, 'loads' | 'refused']> = [
      [
        'anchor: 3 ordinary objects',
        'anchor.yaml',
        (f) => writeFileSync(f, [podManifest('extra'), configMaps(2, 1024, 'small')].join('---\n')),
        'loads',
      ],
      [
        `${MANIFEST_LIMITS.objects} objects (limit)`,
        'many.yaml',
        (f) => writeFileSync(f, manyObjects(MANIFEST_LIMITS.objects)),
        'loads',
      ],
      [
        '3 objects of 1 MiB (3 MiB file)',
        'big.yaml',
        (f) => writeFileSync(f, configMaps(3, MANIFEST_LIMITS.objectBytes - 512)),
        'loads',
      ],
      ['alias bomb (refused)', 'bomb.yaml', (f) => writeFileSync(f, aliasBomb()), 'refused'],
      [
        '50 MB file (refused)',
        'huge.yaml',
        (f) => writeFileSync(f, configMaps(1, 50 * 1024 * 1024)),
        'refused',
      ],
      ['10,000 objects (refused)', 'flood.yaml', (f) => writeFileSync(f, manyObjects(10_000)), 'refused'],
    ];
    for (const [name, file, write, outcome] of cases) {
      const before = memory(agent.pid);
      const done = outcome === 'loads' ? synced() : async () => skipped(file);
      writeFileSync(`/proc/${agent.pid}/clear_refs`, '5'); // resets VmHWM to the current RSS
      // Written beside and renamed in, so the agent never reads half a file.
      write(join(manifests, `.${file}`));
      renameSync(join(manifests, `.${file}`), join(manifests, file));
      await until(name, done);
      // Two rescans (every 5 s) after it was handled: what stays, not just the first pass.
      await new Promise((r) => setTimeout(r, 11_000));
      const after = memory(agent.pid);
      const peak = after.peak - before.rss;
      const growth = after.rss - before.rss;
      if (Number.isNaN(anchor)) anchor = Math.max(peak, 0.1);
      rows.push([
        name,
        before.rss.toFixed(1),
        `+${peak.toFixed(1)}`,
        `${growth >= 0 ? '+' : ''}${growth.toFixed(1)}`,
        (peak / anchor).toFixed(1),
      ]);
    }
    for (const f of ['anchor.yaml', 'many.yaml', 'big.yaml'])
      if (skipped(f)) throw new Error(`${f} was skipped:\n${agent.logs()}`);
  } catch (e) {
    console.error(
      agent
        .logs()
        .split('\n')
        .filter((l) => /"level":"(warn|error)"/.test(l))
        .join('\n')
        .slice(0, 4000),
    );
    throw e;
  } finally {
    await agent.kill9();
    rmSync(dir, { recursive: true, force: true });
  }
  printTable(['file dropped beside 5 pods', 'RSS before MB', 'peak MB', 'after MB', 'peak/anchor'], rows);
}

await main();
