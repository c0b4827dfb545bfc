// A real Mosquitto broker (Debian's `mosquitto`) on a free loopback port, and a recording MQTT client.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { freePort } from '../../scripts/free-port.ts';

export interface Broker {
  port: number;
  url: string;
  logs(): string;
  /** Stops the broker (SIGTERM, then SIGKILL) and waits for it to exit. */
  stop(): Promise<void>;
}

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = tcpConnect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });

/** Starts mosquitto (no persistence: a restart loses retained messages) and waits until it accepts. */
export async function startBroker(opts: { port?: number; passwordFile?: string } = {}): Promise<Broker> {
  const port = opts.port ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), 'outpost-mosquitto-'));
  const conf = join(dir, 'mosquitto.conf');
  writeFileSync(
    conf,
    [
      `listener ${port} 127.0.0.1`,
      opts.passwordFile ? `password_file ${opts.passwordFile}` : 'allow_anonymous true',
      opts.passwordFile ? 'allow_anonymous false' : '',
      'persistence false',
      'log_dest stderr',
      'log_type error',
      'log_type warning',
      'log_type notice',
      '',
    ].join('\n'),
  );
  const child: ChildProcess = spawn('mosquitto', ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  let logs = '';
  child.stderr!.on('data', (d) => {
    logs += d;
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  for (const end = Date.now() + 30_000; !(await accepts(port)); await new Promise((r) => setTimeout(r, 50))) {
    if (gone() || Date.now() > end) {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`mosquitto did not start on port ${port}:\n${logs}`);
    }
  }
  return {
    port,
    url: `mqtt://127.0.0.1:${port}`,
    logs: () => logs,
    async stop() {
      if (!gone()) {
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(t);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface Message {
  topic: string;
  payload: string;
  retain: boolean;
}

/** A client recording every message on `#` and `$hw/#` (retained ones as the broker replays them). */
export interface Recorder {
  client: MqttClient;
  messages: Message[];
  /** The latest payload seen on a topic. */
  last(topic: string): string | undefined;
  /** Messages on topics matching a pattern, since index `from`. */
  on(pattern: RegExp, from?: number): Message[];
  close(): Promise<void>;
}

export async function record(
  url: string,
  opts: { username?: string; password?: string } = {},
): Promise<Recorder> {
  const client = mqtt.connect(url, { reconnectPeriod: 200, clean: true, ...opts });
  const messages: Message[] = [];
  client.on('message', (topic, payload, packet) =>
    messages.push({ topic, payload: payload.toString('utf8'), retain: packet.retain }),
  );
  client.on('error', () => {});
  // Subscribing again after a reconnect replays the retained messages of the new broker.
  client.on('connect', () => void client.subscribeAsync(['#', '$hw/#'], { qos: 1 }).catch(() => {}));
  await new Promise<void>((resolve, reject) => {
    client.once('connect', () => resolve());
    setTimeout(() => reject(new Error('test client did not connect')), 30_000).unref();
  });
  return {
    client,
    messages,
    last(topic) {
      for (let i = messages.length - 1; i >= 0; i--)
        if (messages[i]!.topic === topic) return messages[i]!.payload;
      return undefined;
    },
    on: (pattern, from = 0) => messages.slice(from).filter((m) => pattern.test(m.topic)),
    close: () => client.endAsync(true).catch(() => {}),
  };
}
