// Commands run to completion for scripts (`POST /pods/{ns}/{name}/exec`, keadm's non-TTY exec):
// CRI ExecSync when there is no input, the streaming path (SPDY, whose stdin can end) when there is.
import type { CriClient } from '#lib/cri/client.ts';
import {
  badRequest,
  internal,
  isStatusError,
  type StatusError,
  timeout,
  unavailable,
} from '#lib/kube/status.ts';
import type { RunningContainer } from '#lib/pods/runtime/find-container.ts';
import type { ExecOptions } from './options.ts';
import { exitCodeOf, parseStatus } from './status.ts';
import type { ExecSession } from './upgrade.ts';
import { connectUpstream, STATUS, STDERR, STDOUT } from './upstream.ts';

/** What a finished command left: both output streams, whole, and its exit code. */
export interface ExecOutput {
  stdout: Buffer;
  stderr: Buffer;
  exitCode: number;
}

/**
 * The streams a session opens. A TTY without stdin loses all output on containerd (kubectl never
 * asks for it): when Outpost relays (not `passThrough`), it opens stdin anyway and sends nothing.
 */
function sessionStreams(opts: Omit<ExecOptions, 'container' | 'command'>, passThrough: boolean) {
  return {
    stdin: opts.stdin || (opts.tty && !passThrough),
    stdout: opts.stdout,
    stderr: opts.stderr && !opts.tty,
    tty: opts.tty,
  };
}

const targetName = (t: RunningContainer) =>
  `${t.pod.metadata.namespace}/${t.pod.metadata.name}/${t.container}`;

/**
 * Asks the runtime for a streaming session for `opts` on a running container. `passThrough`: the
 * client will speak to the runtime itself (SPDY), so the session must have exactly its streams.
 * `signal` cancels the runtime call.
 */
export async function prepareExec(
  cri: CriClient,
  target: RunningContainer,
  opts: Omit<ExecOptions, 'container'>,
  passThrough = false,
  signal?: AbortSignal,
): Promise<ExecSession> {
  const streams = sessionStreams(opts, passThrough);
  const req = { containerId: target.containerId, cmd: opts.command, ...streams };
  const url = await cri.exec(req, signal);
  return { url, ...streams, target: targetName(target) };
}

/** The same for an attach to the container's own stdio (CRI Attach). */
export async function prepareAttach(
  cri: CriClient,
  target: RunningContainer,
  opts: Omit<ExecOptions, 'container' | 'command'>,
  passThrough = false,
): Promise<ExecSession> {
  const streams = sessionStreams(opts, passThrough);
  const url = await cri.attach({ containerId: target.containerId, ...streams });
  return { url, ...streams, target: targetName(target) };
}

const where = (t: RunningContainer) => `container ${t.container} of pod ${t.pod.metadata.name}`;

// runc reports a command that cannot start (not found, not executable) as a failed exec; that is
// the caller's mistake, not the node's.
function startFailure(message: string, t: RunningContainer, command: string[]): StatusError | undefined {
  const at = message.indexOf('OCI runtime exec failed: ');
  if (at < 0) return undefined;
  const detail = message.slice(at + 'OCI runtime exec failed: '.length).replace(/: unknown$/, '');
  return badRequest(`cannot run ${JSON.stringify(command)} in ${where(t)}: ${detail}`);
}

/**
 * Runs `command` in a running container and waits for it: at most `timeoutSeconds` (the runtime
 * kills it then: 504 Timeout). `stdin`, when given, is the command's whole input, then EOF.
 * `signal` (the agent's shutdown, never the client's) cancels the runtime call, ExecSync or the
 * streaming path's Exec, and closes the streaming path's session once open: a 503 saying the agent
 * is stopping (the command itself is the runtime's: it ends with its stdin, or when it ends).
 */
export async function runInContainer(
  cri: CriClient,
  target: RunningContainer,
  command: string[],
  opts: { stdin?: string | undefined; timeoutSeconds: number; signal?: AbortSignal | undefined },
): Promise<ExecOutput> {
  const timedOut = () =>
    timeout(
      `command ${JSON.stringify(command)} did not finish within ${opts.timeoutSeconds}s in ${where(target)}`,
    );
  if (opts.stdin === undefined) {
    try {
      return await cri.execSync(target.containerId, command, opts.timeoutSeconds, opts.signal);
    } catch (e) {
      if (isStatusError(e) && e.code === 504) throw timedOut();
      throw (isStatusError(e) && startFailure(e.message, target, command)) || e;
    }
  }
  const session = await prepareExec(
    cri,
    target,
    { command, stdin: true, stdout: true, stderr: true, tty: false },
    false,
    opts.signal,
  );
  const input = Buffer.from(opts.stdin, 'utf8');
  return new Promise((resolve, reject) => {
    const upstream = connectUpstream(session);
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let status: Buffer | undefined;
    let expired = false;
    let cancelled = false;
    const cancel = () => {
      cancelled = true;
      upstream.close();
    };
    opts.signal?.addEventListener('abort', cancel, { once: true });
    // The stream path has no runtime-side timeout: leave the session (the process keeps stdin's EOF).
    const timer = setTimeout(() => {
      expired = true;
      upstream.close();
    }, opts.timeoutSeconds * 1000);
    upstream.onFrame = (channel, data) => {
      if (channel === STDOUT) stdout.push(data);
      else if (channel === STDERR) stderr.push(data);
      else if (channel === STATUS) status = data;
    };
    upstream.onClose = (err) => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', cancel);
      if (expired) return reject(timedOut());
      if (cancelled && !status)
        return reject(
          unavailable(`the exec stream of ${where(target)} was cancelled: the agent is stopping`),
        );
      if (!status) {
        return reject(
          internal(
            `the exec stream of ${where(target)} ended without an exit status${err ? `: ${err.message}` : ''}`,
          ),
        );
      }
      const s = parseStatus(status);
      const exitCode = exitCodeOf(s);
      if (exitCode === undefined) {
        const message = s.message ?? 'the command failed';
        return reject(startFailure(message, target, command) ?? internal(message));
      }
      resolve({ stdout: Buffer.concat(stdout), stderr: Buffer.concat(stderr), exitCode });
    };
    if (opts.signal?.aborted) return cancel();
    if (input.length) upstream.stdin(input);
    upstream.closeStdin();
  });
}
