// A plain node:http watch client for `npm run bench:api`, in its own process as kubectl would be:
// `node bench/watch-client.mjs URL RESOURCE_VERSION`. It opens `/api/v1/pods?watch=1` (chunked
// JSON lines) and, for each event whose pod status carries `message: "t=<hrtime ns>"` (the
// writer's process.hrtime, CLOCK_MONOTONIC, shared by every process on the machine), prints
// `W <ms from the write to this event's arrival>`. A line `G <n>` on stdin makes it time n GETs of
// one pod over one keep-alive connection (the anchor) and print `G <ms>` for each, then `GDONE`.
import { Agent, get } from 'node:http';
import { createInterface } from 'node:readline';

const [url, rv] = process.argv.slice(2);
const out = (line) => process.stdout.write(`${line}\n`);

get(`${url}/api/v1/pods?watch=1&resourceVersion=${rv}`, (res) => {
  if (res.statusCode !== 200) throw new Error(`watch: HTTP ${res.statusCode}`);
  out('WATCHING');
  let buf = '';
  res.setEncoding('utf8');
  res.on('data', (chunk) => {
    const at = process.hrtime.bigint();
    buf += chunk;
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      const m = /"message":"t=(\d+)"/.exec(line);
      if (m) out(`W ${Number(at - BigInt(m[1])) / 1e6}`);
    }
  });
});

const agent = new Agent({ keepAlive: true, maxSockets: 1 });
const once = () =>
  new Promise((resolve, reject) => {
    const t = process.hrtime.bigint();
    get(`${url}/api/v1/namespaces/ns-7/pods/pod-0007`, { agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(Number(process.hrtime.bigint() - t) / 1e6));
    }).on('error', reject);
  });

createInterface({ input: process.stdin }).on('line', async (line) => {
  const m = /^G (\d+)$/.exec(line);
  if (!m) return;
  for (let i = 0; i < Number(m[1]); i++) out(`G ${await once()}`);
  out('GDONE');
});
