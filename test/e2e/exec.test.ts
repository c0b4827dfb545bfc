// Exec on a real containerd (the lab): the real kubectl (WebSocket v5 and SPDY), `outpost exec`,
// the JSON API for scripts, keadm's ExecResponse API, the protocol itself and every refusal.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { WebSocket } from 'ws';
import { CriClient } from '#lib/cri/client.ts';
import { kubectl, outpost, type Run, run, startTestAgent, type TestAgent } from '../helpers/agent.ts';
import { labOrSkip, removeSandboxes, waitFor } from '../helpers/lab.ts';

const lab = await labOrSkip('test/e2e/exec.test.ts');
if (lab) {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-e2e-exec-'));
  const home = mkdtempSync(join(tmpdir(), 'outpost-e2e-exec-home-'));
  const ns = `exec-${Math.random().toString(36).slice(2, 7)}`;
  const cri = new CriClient({ endpoint: lab.endpoint });
  const image = lab.images.app;
  const container = (name: string, cmd = 'exec sleep 3600') =>
    `    - name: ${name}\n      image: ${image}\n      imagePullPolicy: IfNotPresent\n      command: ["sh", "-c", ${JSON.stringify(cmd)}]\n      env: [{name: WHO, value: ${name}}]\n`;
  const pod = (name: string, spec: string, annotations = '{}') =>
    `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\n  namespace: ${ns}\n  annotations: ${annotations}\nspec:\n${spec}`;
  writeFileSync(
    join(dir, 'pods.yaml'),
    [
      pod('shell', `  containers:\n${container('main')}`),
      pod('pair', `  containers:\n${container('a')}${container('b')}`),
      pod(
        'annotated',
        `  containers:\n${container('a')}${container('b')}`,
        '{kubectl.kubernetes.io/default-container: b}',
      ),
      pod('finished', `  restartPolicy: Never\n  containers:\n${container('main', 'true')}`),
    ].join('---\n'),
  );
  const agent: TestAgent = await startTestAgent({ manifests: dir, runtimeEndpoint: lab.endpoint });
  const base = `${agent.url}/api/v1/namespaces/${ns}/pods`;

  const json = async (path: string, body: unknown) => {
    const res = await fetch(`${agent.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...agent.admin },
      body: JSON.stringify(body),
    });
    return { code: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const execJson = (podName: string, body: unknown) => json(`/pods/${ns}/${podName}/exec`, body);
  const status = (code: number, reason: string, message: string) => ({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    code,
  });
  const k = (args: string[], opts: Parameters<typeof kubectl>[2] = {}) =>
    kubectl(agent.url, ['-n', ns, ...args], opts);
  const op = (args: string[], opts: Parameters<typeof outpost>[1] = {}) =>
    outpost(['exec', '-s', agent.url, '-n', ns, ...args], opts);

  /** One v5/v4 channel session at the protocol level: frames out, frames and close code in. */
  function session(
    query: string,
    protocols: string[],
    script: (ws: WebSocket) => void = () => {},
    onOutput: (ws: WebSocket, text: string) => void = () => {},
  ) {
    return new Promise<{ protocol: string; frames: [number, string][]; close: number; pong: boolean }>(
      (resolve, reject) => {
        const ws = new WebSocket(`${base.replace('http', 'ws')}/shell/exec?${query}`, protocols, {
          headers: agent.admin,
        });
        const frames: [number, string][] = [];
        let pong = false;
        ws.on('pong', () => {
          pong = true;
        });
        ws.on('open', () => {
          ws.ping();
          script(ws);
        });
        ws.on('message', (d: Buffer) => {
          frames.push([d[0]!, d.subarray(1).toString()]);
          onOutput(ws, channel(frames, 1));
        });
        ws.on('close', (close) => resolve({ protocol: ws.protocol, frames, close, pong }));
        ws.on('error', reject);
      },
    );
  }
  const channel = (frames: [number, string][], n: number) =>
    frames
      .filter(([c]) => c === n)
      .map(([, d]) => d)
      .join('');

  // In a container terminal: print `ready`, wait for a line, then the terminal size once it has one
  // (the client's resize and its input travel on different channels, handled apart by containerd).
  // busybox's `stty size` exits 0 even while the terminal has no size yet (it prints only an error),
  // so the loop waits for its output, and prints the size that one call read.
  const sizeAfterInput = (exit: number) =>
    `echo ready; read x; until s=$(stty size 2>/dev/null) && [ -n "$s" ]; do sleep 0.1; done; echo "$s"; exit ${exit}`;

  /** kubectl under a pseudo-terminal (`script`), fed `input` once `ready` shows on its output. */
  function underTerminal(command: string, ready: string, input: string): Promise<Run> {
    return new Promise((resolve) => {
      const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], {
        // The outpost CLI finds the admin kubeconfig in the data directory, as on the node.
        env: { ...process.env, HOME: home, KUBECONFIG: join(home, 'none'), OUTPOST_DATA_DIR: agent.dataDir },
      });
      let stdout = '';
      let fed = false;
      const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
      child.stdout.on('data', (d) => {
        stdout += d;
        if (!fed && stdout.includes(ready)) {
          fed = true;
          child.stdin.write(input);
        }
      });
      // stdin stays open until kubectl is done: its end would be typed into the terminal.
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr: '' });
      });
    });
  }
  const kubectlCli = (args: string[]) =>
    `kubectl --kubeconfig=${agent.kubeconfig} --cache-dir=${join(home, 'cache')} -n ${ns} ${args.join(' ')}`;

  // The versioned kubectl 1.28 beside the dispatcher speaks only SPDY/3.1.
  const kubectlDir = dirname(realpathSync(execFileSync('which', ['kubectl'], { encoding: 'utf8' }).trim()));
  const kubectl128 = join(kubectlDir, 'kubectl.1.28');
  const spdy = (args: string[], input?: string) =>
    run(
      kubectl128,
      [`--kubeconfig=${agent.kubeconfig}`, `--cache-dir=${join(home, 'cache-128')}`, '-n', ns, ...args],
      {
        env: { ...process.env, HOME: home, KUBECONFIG: join(home, 'none') },
        ...(input === undefined ? {} : { input }),
      },
    );

  test('the pods are running on containerd', async () => {
    const running = await waitFor(
      () =>
        ['shell', 'pair', 'annotated'].every((n) =>
          agent.store.pods.get(ns, n)?.status?.containerStatuses?.every((s) => s.state?.running),
        ) && agent.store.pods.get(ns, 'finished')?.status?.phase === 'Succeeded',
      120_000,
    );
    assert.ok(running, 'pods did not start');
  });

  test('kubectl exec -- echo hi prints hi and exits 0', async () => {
    const r = await k(['exec', 'shell', '--', 'echo', 'hi']);
    assert.is(r.code, 0, r.stderr);
    assert.is(r.stdout, 'hi\n');
  });

  test('kubectl exec of a command exiting 3 exits 3', async () => {
    const r = await k(['exec', 'shell', '--', 'sh', '-c', 'exit 3']);
    assert.is(r.code, 3, r.stderr);
    assert.match(r.stderr, /command terminated with exit code 3/);
  });

  test('echo data | kubectl exec -i -- cat ends and echoes (stdin EOF reaches the process)', async () => {
    const r = await k(['exec', '-i', 'shell', '--', 'cat'], { input: 'data\n' });
    assert.is(r.code, 0, r.stderr);
    assert.is(r.stdout, 'data\n');
    const wc = await k(['exec', '-i', 'shell', '--', 'wc', '-c'], { input: 'x'.repeat(300_000) });
    assert.is(wc.stdout.trim(), '300000');
  });

  test('output written only to stderr reaches kubectl', async () => {
    const r = await k(['exec', 'shell', '--', 'sh', '-c', 'echo only-err >&2']);
    assert.is(r.code, 0, r.stderr);
    assert.is(r.stdout, '');
    assert.is(r.stderr, 'only-err\n');
  });

  test('kubectl exec -it runs in a terminal of the client size, with exit codes', async () => {
    const r = await underTerminal(
      `stty rows 33 cols 101; ${kubectlCli(['exec', '-it', 'shell', '--', 'sh', '-c', `'${sizeAfterInput(7)}'`])}`,
      'ready',
      'go\r',
    );
    assert.is(r.code, 7, r.stdout);
    assert.match(r.stdout, /33 101\r\n/, JSON.stringify(r.stdout));
    assert.match(r.stdout, /command terminated with exit code 7/);
  });

  test('kubectl exec picks the default container and refuses unknown pods and containers', async () => {
    const annotated = await k(['exec', 'annotated', '--', 'sh', '-c', 'echo $WHO']);
    assert.is(annotated.stdout, 'b\n', annotated.stderr);
    const named = await k(['exec', 'pair', '-c', 'b', '--', 'sh', '-c', 'echo $WHO']);
    assert.is(named.stdout, 'b\n', named.stderr);
    const nope = await k(['exec', 'nope', '--', 'true']);
    assert.is(nope.code, 1);
    assert.is(nope.stderr.trim(), 'Error from server (NotFound): pods "nope" not found');
    const bad = await k(['exec', 'shell', '-c', 'zz', '--', 'true']);
    assert.is(bad.code, 1);
    assert.is(bad.stderr.trim(), 'Error from server (BadRequest): container zz is not valid for pod shell');
  });

  test('kubectl 1.28 (SPDY/3.1) is passed through to the runtime: output, exit code, stdin EOF', async () => {
    if (!existsSync(kubectl128)) {
      assert.unreachable(`${kubectl128} is missing`);
    }
    const hi = await spdy(['exec', 'shell', '--', 'echo', 'hi']);
    assert.is(hi.stdout, 'hi\n', hi.stderr);
    assert.is(hi.code, 0);
    const three = await spdy(['exec', 'shell', '--', 'sh', '-c', 'echo e >&2; exit 3']);
    assert.is(three.code, 3);
    assert.match(three.stderr, /^e\n/);
    const cat = await spdy(['exec', '-i', 'shell', '--', 'cat'], 'over spdy\n');
    assert.is(cat.stdout, 'over spdy\n', cat.stderr);
    const nope = await spdy(['exec', 'nope', '--', 'true']);
    assert.is(nope.stderr.trim(), 'Error from server (NotFound): pods "nope" not found');
  });

  test('outpost exec: output, exit codes, piped stdin, refusals', async () => {
    const hi = await op(['shell', '--', 'echo', 'hi']);
    assert.is(hi.code, 0, hi.stderr);
    assert.is(hi.stdout, 'hi\n');
    const three = await op(['shell', '--', 'sh', '-c', 'echo only-err >&2; exit 3']);
    assert.is(three.code, 3);
    assert.is(three.stdout, '');
    assert.is(three.stderr, 'only-err\ncommand terminated with exit code 3\n');
    const cat = await op(['-i', 'shell', '--', 'cat'], { input: 'piped\n' });
    assert.is(cat.code, 0, cat.stderr);
    assert.is(cat.stdout, 'piped\n');
    const ctl = await outpost([
      'ctl',
      'exec',
      '-s',
      agent.url,
      '-n',
      ns,
      'pair',
      '-c',
      'a',
      '--',
      'sh',
      '-c',
      'echo $WHO',
    ]);
    assert.is(ctl.stdout, 'a\n', ctl.stderr);
    const nope = await op(['nope', '--', 'true']);
    assert.is(nope.code, 1);
    assert.is(nope.stderr, 'Error from server (NotFound): pods "nope" not found\n');
    const none = await op(['shell']);
    assert.is(none.code, 2); // a usage error: exit code 2, as README and docs/health.md promise
    assert.is(none.stderr, 'error: you must specify at least one command for the container\n');
  });

  test('outpost exec -it gets the terminal size', async () => {
    const cli = `${process.execPath} --import tsx ${join(import.meta.dirname, '../../bin/outpost.ts')}`;
    const r = await underTerminal(
      `stty rows 21 cols 77; ${cli} exec -s ${agent.url} -n ${ns} -it shell -- sh -c '${sizeAfterInput(5)}'`,
      'ready',
      'go\r',
    );
    assert.is(r.code, 5, r.stdout);
    // libuv's raw mode keeps ONLCR, so the local terminal adds a (harmless) \r to the remote's \r\n.
    assert.match(r.stdout, /21 77\r+\n/, JSON.stringify(r.stdout));
    assert.match(r.stdout, /command terminated with exit code 5/);
  });

  test('POST /pods/{ns}/{name}/exec answers stdout, stderr and the exit code', async () => {
    const r = await execJson('shell', { command: ['sh', '-c', 'echo out; echo err >&2; exit 2'] });
    assert.equal(r, { code: 200, body: { stdout: 'out\n', stderr: 'err\n', exitCode: 2 } });
    const errOnly = await execJson('shell', { command: ['sh', '-c', 'echo only-err >&2'] });
    assert.equal(errOnly.body, { stdout: '', stderr: 'only-err\n', exitCode: 0 });
    const piped = await execJson('shell', {
      command: ['sh', '-c', 'cat; echo done >&2; exit 4'],
      stdin: 'line 1\nline 2\n',
    });
    assert.equal(piped.body, { stdout: 'line 1\nline 2\n', stderr: 'done\n', exitCode: 4 });
    const chosen = await execJson('pair', { command: ['sh', '-c', 'echo $WHO'], container: 'b' });
    assert.equal(chosen.body, { stdout: 'b\n', stderr: '', exitCode: 0 });
  });

  test('the keadm ExecResponse API keeps stderr-only output and reports the exit code', async () => {
    const post = async (q: string) => {
      const res = await fetch(`${base}/shell/exec?${q}`, { method: 'POST', headers: agent.admin });
      return { code: res.status, body: await res.json() };
    };
    const both = await post('command=sh&command=-c&command=echo+out;echo+err+>%262;exit+2');
    assert.equal(both, {
      code: 200,
      body: {
        errMessages: ['command terminated with non-zero exit code: 2'],
        runOutMessages: ['out\n'],
        runErrMessages: ['err\n'],
      },
    });
    const errOnly = await post('command=sh&command=-c&command=echo+only-err+>%262');
    assert.equal(errOnly.body, { errMessages: [], runOutMessages: [], runErrMessages: ['only-err\n'] });
    const nope = await fetch(`${base}/nope/exec?command=true`, { method: 'POST', headers: agent.admin });
    assert.equal(await nope.json(), {
      ...status(404, 'NotFound', 'pods "nope" not found'),
      details: { name: 'nope', kind: 'pods' },
    });
  });

  test('channel protocol: v5 stdin close, v4 accepted, pings answered, status frames', async () => {
    const v5 = await session(
      'command=cat&stdin=true&stdout=true&stderr=true',
      ['v5.channel.k8s.io'],
      (ws) => {
        ws.send(Buffer.from([0, ...Buffer.from('v5 data\n')]));
        ws.send(Buffer.from([255, 0]));
      },
    );
    assert.is(v5.protocol, 'v5.channel.k8s.io');
    assert.is(channel(v5.frames, 1), 'v5 data\n');
    assert.equal(JSON.parse(channel(v5.frames, 3)), { metadata: {}, status: 'Success' });
    assert.is(v5.close, 1000);
    assert.ok(v5.pong, 'a ping got its pong');
    const v4 = await session('command=sh&command=-c&command=exit+9&stdout=true&stderr=true', [
      'v4.channel.k8s.io',
      'channel.k8s.io',
    ]);
    assert.is(v4.protocol, 'v4.channel.k8s.io');
    const s = JSON.parse(channel(v4.frames, 3));
    assert.is(s.reason, 'NonZeroExitCode');
    assert.equal(s.details.causes, [{ reason: 'ExitCode', message: '9' }]);
    assert.is(v4.close, 1000);
    // The size is sent first, the input once the command shows it runs (as a person would type).
    let typed = false;
    const tty = await session(
      `command=sh&command=-c&command=${encodeURIComponent(sizeAfterInput(0))}&stdin=true&stdout=true&tty=true`,
      ['v5.channel.k8s.io'],
      (ws) => ws.send(Buffer.from([4, ...Buffer.from('{"Width":101,"Height":33}')])),
      (ws, out) => {
        if (typed || !out.includes('ready')) return;
        typed = true;
        ws.send(Buffer.from([0, ...Buffer.from('go\r')]));
      },
    );
    assert.match(channel(tty.frames, 1), /ready\r\n.*go\r\n33 101\r\n/s);
  });

  test('bad exec requests get the exact Status', async () => {
    assert.equal(await execJson('nope', { command: ['true'] }), {
      code: 404,
      body: { ...status(404, 'NotFound', 'pods "nope" not found'), details: { name: 'nope', kind: 'pods' } },
    });
    assert.equal(await execJson('shell', { command: ['true'], container: 'zz' }), {
      code: 400,
      body: {
        ...status(400, 'BadRequest', 'container zz is not valid for pod shell'),
        details: { name: 'shell', kind: 'pods' },
      },
    });
    assert.equal(
      (await execJson('pair', { command: ['true'] })).body.message,
      'a container name must be specified for pod pair, choose one of: [a b]',
    );
    const finished = await execJson('finished', { command: ['true'] });
    assert.equal(finished, {
      code: 409,
      body: {
        ...status(409, 'Conflict', 'container main is not running in pod finished (Completed)'),
        details: { name: 'finished', kind: 'pods' },
      },
    });
    const missing = await execJson('shell', {});
    assert.is(missing.code, 422);
    assert.is(missing.body.reason, 'Invalid');
    assert.equal((missing.body.details as { causes: unknown[] }).causes, [
      {
        reason: 'FieldValueInvalid',
        field: 'command',
        message: 'Invalid input: expected array, received undefined',
      },
    ]);
    const empty = await execJson('shell', { command: [] });
    assert.is(empty.body.message, 'PodExecOptions is invalid: command: must name at least one command');
    for (const bad of [0, 1.5, '5', 3601]) {
      const r = await execJson('shell', { command: ['true'], timeoutSeconds: bad });
      assert.is(r.code, 422, String(bad));
      assert.match(String(r.body.message), /^PodExecOptions is invalid: timeoutSeconds: /);
    }
    const notFound = await execJson('shell', { command: ['no-such-command'] });
    assert.is(notFound.code, 400);
    assert.match(
      String(notFound.body.message),
      /^cannot run \["no-such-command"\] in container main of pod shell: .*executable file not found/,
    );
    const slow = await execJson('shell', { command: ['sh', '-c', 'exec sleep 30'], timeoutSeconds: 1 });
    assert.equal(slow, {
      code: 504,
      body: status(
        504,
        'Timeout',
        'command ["sh","-c","exec sleep 30"] did not finish within 1s in container main of pod shell',
      ),
    });
    const noCommand = await fetch(`${base}/shell/exec?stdout=true`, { headers: agent.admin });
    assert.equal(
      await noCommand.json(),
      status(400, 'BadRequest', 'you must specify at least one command for the container'),
    );
    const badFlag = await fetch(`${base}/shell/exec?command=true&stdin=maybe`, { headers: agent.admin });
    assert.is(badFlag.status, 400);
    assert.is(
      ((await badFlag.json()) as { message: string }).message,
      'invalid query: stdin: must be true or false',
    );
    const plain = await fetch(`${base}/shell/exec?command=true&stdout=true`, { headers: agent.admin });
    assert.equal(await plain.json(), status(400, 'BadRequest', 'Upgrade request required'));
    const refused = await new Promise<{ code: number; body: unknown }>((resolve, reject) => {
      const ws = new WebSocket(
        `${base.replace('http', 'ws')}/shell/exec?command=true&stdout=true`,
        ['base64.channel.k8s.io'],
        { headers: agent.admin },
      );
      ws.on('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (d) => {
          body += d;
        });
        res.on('end', () => resolve({ code: res.statusCode ?? 0, body: JSON.parse(body) }));
      });
      ws.on('open', () => reject(new Error('upgraded')));
    });
    assert.equal(refused, {
      code: 400,
      body: status(
        400,
        'BadRequest',
        'none of the offered WebSocket subprotocols [base64.channel.k8s.io] is supported: use one of [v5.channel.k8s.io v4.channel.k8s.io]',
      ),
    });
  });

  test('a runtime that is down or missing is a 503 naming it', async () => {
    const endpoint = `unix://${join(dir, 'no-runtime.sock')}`;
    const down = await startTestAgent({ manifests: dir, runtimeEndpoint: endpoint });
    const none = await startTestAgent({ manifests: dir });
    try {
      const post = ({ url, admin }: TestAgent) =>
        fetch(`${url}/pods/${ns}/shell/exec`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...admin },
          body: '{"command":["true"]}',
        }).then(async (r) => ({
          code: r.status,
          body: (await r.json()) as { message: string; reason: string },
        }));
      const a = await waitFor(async () => {
        const r = await post(down);
        return r.code === 503 && r;
      }, 60_000);
      assert.ok(a, 'no 503 from the agent whose runtime is down');
      assert.is(a.body.reason, 'ServiceUnavailable');
      assert.ok(a.body.message.startsWith(`container runtime at ${endpoint} is unavailable`), a.body.message);
      const b = await post(none);
      assert.equal(b, {
        code: 503,
        body: status(
          503,
          'ServiceUnavailable',
          'no container runtime is configured on this node (outpost serve --runtime-endpoint)',
        ),
      });
    } finally {
      await down.stop();
      await none.stop();
    }
  });

  test.after(async () => {
    await agent.stop();
    await removeSandboxes(cri, ns);
    cri.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
    await lab.stop();
  });
}
test.run();
