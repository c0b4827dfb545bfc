// npm run --silent fake-cri -- --listen unix:///PATH [--listen unix:///PATH2 ...]
//
// A fake CRI runtime for scale tests (bench tooling, never part of the agent): each --listen is
// its own runtime on its own socket, so one process can stand in for many nodes' runtimes. Prints
// `listening PATH` per socket, then serves until SIGINT/SIGTERM, removing its sockets on the way
// out. Refuses a path where another process answers (a real containerd's socket, say).
import { rmSync } from 'node:fs';
import { type FakeCriServer, startFakeCri } from './server.ts';

const args = process.argv.slice(2);
const listens: string[] = [];
for (let i = 0; i < args.length; i++) {
  const a = args[i]!;
  if (a === '--listen' && args[i + 1]) listens.push(args[++i]!);
  else if (a.startsWith('--listen=')) listens.push(a.slice('--listen='.length));
  else {
    process.stderr.write(
      `fake-cri: unknown argument ${a}\nusage: fake-cri --listen unix:///PATH [--listen ...]\n`,
    );
    process.exit(2);
  }
}
if (listens.length === 0) {
  process.stderr.write('usage: fake-cri --listen unix:///PATH [--listen ...]\n');
  process.exit(2);
}

const servers: FakeCriServer[] = [];
const stop = async () => {
  for (const s of servers) {
    await s.stop();
    rmSync(s.path, { force: true });
  }
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
try {
  for (const l of listens) {
    const s = await startFakeCri(l);
    servers.push(s);
    process.stdout.write(`listening ${s.path}\n`);
  }
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n`);
  for (const s of servers) await s.stop();
  process.exit(1);
}
