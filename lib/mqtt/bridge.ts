// The MQTT bridge: the node's devices and pods on a broker, as KubeEdge's EventBus topics and as
// Home Assistant entities, and desired-value writes and pod restarts coming back from there.
//
// Nothing waits for the broker: what would be published is kept as the latest payload per topic and
// sent while connected; after a reconnect every kept topic is sent again (the broker may have lost
// its retained messages). So an offline broker costs one payload per topic, never a growing queue.
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import type { Device, DeviceModel } from '#lib/kube/devices.ts';
import { isStatusError } from '#lib/kube/status.ts';
import type { Pod } from '#lib/kube/types.ts';
import type { Logger } from '#lib/log.ts';
import type { Store } from '#lib/store/index.ts';
import type { WatchEvent } from '#lib/store/watch-hub.ts';
import { type BackoffCurve, backoffDelay } from '#lib/supervisor/backoff.ts';
import type { ModuleContext } from '#lib/supervisor/modules.ts';
import {
  type DiscoveryContext,
  deviceDiscovery,
  deviceState,
  nodeDiscovery,
  podDiscovery,
  podState,
} from './discovery.ts';
import { deviceId, HW_TWIN_UPDATE, hwTopics, hwUpdateId, OutpostTopics, parseDeviceId } from './topics.ts';
import {
  type MsgTwin,
  parseTwinUpdate,
  stateMessage,
  twinDelta,
  twinDocument,
  twinsChanged,
  twinsOf,
  withDesired,
} from './twin.ts';

export interface MqttBridgeOptions {
  /** `mqtt://host:1883` or `mqtts://host:8883`. */
  url: string;
  /** Client options: credentials, TLS (ca, cert, key, rejectUnauthorized). */
  client?: IClientOptions;
  node: string;
  topicPrefix?: string;
  discoveryPrefix?: string;
  version: string;
  store: Store;
  /** Applies a device edit through its mapper (DeviceManager.editDevice). */
  editDevice?: (namespace: string, name: string, change: (d: Device) => Device) => Promise<Device>;
  /** Restarts a pod's containers (503 without a runtime). */
  restartPod?: (namespace: string, name: string) => Promise<unknown>;
  log: Logger;
  now?: () => number;
  /** Reconnect delays (default 1 s doubling up to 30 s). */
  backoff?: BackoffCurve;
}

/** The broker link as the dashboard shows it. */
export interface MqttStatus {
  broker: string;
  connected: boolean;
  since: number;
  lastError?: string;
  published: number;
  topics: number;
}

interface Kept {
  payload: string;
  retain: boolean;
}

const json = (v: unknown) => JSON.stringify(v);

/** Publishes the node's state to an MQTT broker and takes commands from it; see the file comment. */
export class MqttBridge {
  readonly topics: OutpostTopics;
  readonly #o: MqttBridgeOptions;
  readonly #ctx: DiscoveryContext;
  readonly #now: () => number;
  /** The latest payload of every topic Outpost publishes (an empty retained payload deletes). */
  readonly #kept = new Map<string, Kept>();
  /** Per device: what was last published, to publish twin changes and remove stale entities. */
  readonly #devices = new Map<string, { twins: Record<string, MsgTwin>; state: string; configs: string[] }>();
  readonly #pods = new Map<string, string[]>();
  #client: MqttClient | undefined;
  #attempts = 0;
  #timer: NodeJS.Timeout | undefined;
  #status: MqttStatus;
  #user: string;

  constructor(opts: MqttBridgeOptions) {
    this.#o = opts;
    this.#now = opts.now ?? Date.now;
    this.topics = new OutpostTopics(opts.topicPrefix ?? 'outpost', opts.node);
    this.#ctx = {
      node: opts.node,
      discoveryPrefix: opts.discoveryPrefix ?? 'homeassistant',
      topics: this.topics,
      version: opts.version,
    };
    const u = new URL(opts.url);
    this.#user = `mqtt:${opts.client?.username ?? (decodeURIComponent(u.username) || 'anonymous')}`;
    u.username = '';
    u.password = '';
    this.#status = { broker: u.toString(), connected: false, since: this.#now(), published: 0, topics: 0 };
  }

  status(): MqttStatus {
    return { ...this.#status, topics: this.#kept.size };
  }

  /** The supervised module body: follow the metabase, keep the broker link up until aborted. */
  async run(ctx: ModuleContext): Promise<void> {
    const { store } = this.#o;
    const rv = store.rv.current;
    const stops = [
      store.hub.subscribe('devices', rv, (e) => this.#onDevice(e as WatchEvent<Device>)),
      store.hub.subscribe('devicemodels', rv, (e) => this.#onModel(e as WatchEvent<DeviceModel>)),
      store.hub.subscribe('pods', rv, (e) => this.#onPod(e as WatchEvent<Pod>)),
    ];
    const node = nodeDiscovery(this.#ctx);
    this.#keep(node.topic, json(node.payload), true);
    for (const d of store.devices.list().items) this.#device(d);
    for (const p of store.pods.list().items) this.#pod(p);
    this.#connect();
    ctx.ready();
    try {
      await new Promise<void>((resolve) =>
        ctx.signal.aborted
          ? resolve()
          : ctx.signal.addEventListener('abort', () => resolve(), { once: true }),
      );
    } finally {
      for (const stop of stops) stop();
      await this.#close();
    }
  }

  #connect(): void {
    const { log } = this.#o;
    const client = mqtt.connect(this.#o.url, {
      clientId: `outpost-${this.#o.node}`,
      clean: true,
      keepalive: 30,
      connectTimeout: 10_000,
      // Reconnects are ours (backoff below); nothing is queued while offline.
      reconnectPeriod: 0,
      queueQoSZero: false,
      will: { topic: this.topics.availability, payload: Buffer.from('offline'), qos: 1, retain: true },
      ...this.#o.client,
    });
    this.#client = client;
    client.on('connect', () => {
      this.#attempts = 0;
      this.#status = { ...this.#status, connected: true, since: this.#now() };
      delete this.#status.lastError;
      log.info({ broker: this.#status.broker }, 'mqtt connected');
      client.subscribe([HW_TWIN_UPDATE, ...this.topics.subscriptions], { qos: 1 }, (err) => {
        if (err) log.warn({ err: err.message }, 'mqtt subscribe failed');
      });
      this.#send(this.topics.availability, 'online', true);
      for (const [topic, k] of [...this.#kept]) this.#flush(topic, k);
    });
    client.on('message', (topic, payload) => void this.#onMessage(topic, payload.toString('utf8')));
    client.on('error', (err) => {
      this.#status.lastError = err.message;
      log.debug({ err: err.message }, 'mqtt error');
    });
    client.on('close', () => {
      if (this.#status.connected) {
        this.#status = { ...this.#status, connected: false, since: this.#now() };
        log.warn({ broker: this.#status.broker, err: this.#status.lastError }, 'mqtt disconnected');
      }
      if (this.#client !== client) return;
      const delay = backoffDelay(this.#attempts++, { initialMs: 1000, maxMs: 30_000, ...this.#o.backoff });
      clearTimeout(this.#timer);
      this.#timer = setTimeout(() => {
        if (this.#client === client && !client.connected) client.reconnect();
      }, delay);
    });
  }

  async #close(): Promise<void> {
    clearTimeout(this.#timer);
    const client = this.#client;
    this.#client = undefined;
    if (!client) return;
    if (client.connected) {
      // A clean stop says offline itself (the broker sends the last will only on a lost connection).
      await client
        .publishAsync(this.topics.availability, 'offline', { qos: 1, retain: true })
        .catch(() => undefined);
    }
    await client.endAsync(true).catch(() => undefined);
  }

  // ---- what goes out ----

  /** Keeps a topic's latest payload and sends it if connected; an unchanged retained payload is not resent. */
  #keep(topic: string, payload: string, retain: boolean): void {
    const prev = this.#kept.get(topic);
    if (retain && prev && prev.payload === payload && prev.retain) return;
    const k = { payload, retain };
    this.#kept.set(topic, k);
    this.#flush(topic, k);
  }

  #flush(topic: string, k: Kept): void {
    if (!this.#client?.connected) return;
    this.#send(topic, k.payload, k.retain);
    // An empty retained message deletes the topic at the broker: once sent, nothing to keep.
    if (k.payload === '' && this.#kept.get(topic) === k) this.#kept.delete(topic);
  }

  #send(topic: string, payload: string, retain: boolean): void {
    const client = this.#client;
    if (!client?.connected) return;
    this.#status.published++;
    client.publish(topic, payload, { qos: 1, retain }, (err) => {
      if (err) this.#o.log.debug({ topic, err: err.message }, 'mqtt publish failed');
    });
  }

  #base() {
    return { event_id: '', timestamp: this.#now() };
  }

  #model(d: Device): DeviceModel | undefined {
    const ref = d.spec.deviceModelRef?.name;
    return ref ? this.#o.store.deviceModels.get(d.metadata.namespace ?? 'default', ref) : undefined;
  }

  #device(d: Device): void {
    const ns = d.metadata.namespace ?? 'default';
    const key = `${ns}/${d.metadata.name}`;
    const id = deviceId(ns, d.metadata.name!);
    const hw = hwTopics(id);
    const prev = this.#devices.get(key);
    const configs = deviceDiscovery(this.#ctx, d, this.#model(d));
    for (const c of configs) this.#keep(c.topic, json(c.payload), true);
    for (const stale of prev?.configs ?? [])
      if (!configs.some((c) => c.topic === stale)) this.#keep(stale, '', true);
    this.#keep(this.topics.deviceState(id), json(deviceState(d)), true);
    const twins = twinsOf(d, this.#model(d), this.#now());
    if (!prev || twinsChanged(prev.twins, twins)) {
      this.#keep(hw.document, json(twinDocument(this.#base(), prev?.twins ?? {}, twins)), false);
      const delta = twinDelta(this.#base(), twins);
      if (delta) this.#keep(hw.delta, json(delta), false);
    }
    const state = d.status?.state ?? '';
    if (state && state !== prev?.state) this.#keep(hw.state, json(stateMessage(this.#base(), d)), false);
    this.#devices.set(key, { twins, state, configs: configs.map((c) => c.topic) });
  }

  #onDevice(e: WatchEvent<Device>): void {
    const d = e.object;
    if (e.type !== 'DELETED') {
      this.#device(d);
      return;
    }
    const ns = d.metadata.namespace ?? 'default';
    const key = `${ns}/${d.metadata.name}`;
    const id = deviceId(ns, d.metadata.name!);
    for (const topic of this.#devices.get(key)?.configs ?? []) this.#keep(topic, '', true);
    this.#keep(this.topics.deviceState(id), '', true);
    const hw = hwTopics(id);
    this.#kept.delete(hw.document);
    this.#kept.delete(hw.delta);
    this.#kept.delete(hw.state);
    this.#devices.delete(key);
  }

  // A model's types, ranges and access modes shape its devices' entities.
  #onModel(e: WatchEvent<DeviceModel>): void {
    const ns = e.object.metadata.namespace ?? 'default';
    for (const d of this.#o.store.devices.list({ namespace: ns }).items)
      if (d.spec.deviceModelRef?.name === e.object.metadata.name) this.#device(d);
  }

  #pod(p: Pod): void {
    const ns = p.metadata.namespace ?? 'default';
    const name = p.metadata.name!;
    const configs = podDiscovery(this.#ctx, ns, name);
    for (const c of configs) this.#keep(c.topic, json(c.payload), true);
    this.#pods.set(`${ns}/${name}`, [...configs.map((c) => c.topic), this.topics.podState(ns, name)]);
    this.#keep(this.topics.podState(ns, name), json(podState(p)), true);
  }

  #onPod(e: WatchEvent<Pod>): void {
    if (e.type !== 'DELETED') {
      this.#pod(e.object);
      return;
    }
    const key = `${e.object.metadata.namespace ?? 'default'}/${e.object.metadata.name}`;
    for (const topic of this.#pods.get(key) ?? []) this.#keep(topic, '', true);
    this.#pods.delete(key);
  }

  // ---- what comes in ----

  async #onMessage(topic: string, payload: string): Promise<void> {
    const hwId = hwUpdateId(topic);
    if (hwId !== undefined) {
      let parsed: ReturnType<typeof parseTwinUpdate>;
      try {
        parsed = parseTwinUpdate(payload);
      } catch (e) {
        return this.#result(hwId, '', {}, 400, (e as Error).message, topic);
      }
      // A message with actual values only is a mapper's report: those come over DMI.
      if (!Object.keys(parsed.desired).length) return;
      return this.#setDesired(hwId, parsed.eventId, parsed.desired, topic);
    }
    const cmd = this.topics.command(topic);
    if (cmd?.kind === 'set') return this.#setDesired(cmd.id, '', { [cmd.property]: payload.trim() }, topic);
    if (cmd?.kind === 'restart') return this.#restart(cmd.namespace, cmd.name, topic);
  }

  async #setDesired(id: string, eventId: string, desired: Record<string, string>, topic: string) {
    const { namespace, name } = parseDeviceId(id);
    const edit = this.#o.editDevice;
    try {
      if (!edit)
        throw Object.assign(new Error('device management (DMI) is not running on this node'), { code: 503 });
      await edit(namespace, name, (d) => withDesired(d, desired));
      this.#result(id, eventId, desired, 200, '', topic);
    } catch (e) {
      const code = isStatusError(e) ? e.code : ((e as { code?: number }).code ?? 500);
      this.#result(id, eventId, desired, code, (e as Error).message, topic);
    }
  }

  /** `.../twin/update/result`: the twins applied, or edgecore's error shape `{code, reason}`; audited. */
  #result(
    id: string,
    eventId: string,
    desired: Record<string, string>,
    code: number,
    reason: string,
    topic: string,
  ) {
    const base = { event_id: eventId, timestamp: this.#now() };
    const at = this.#now();
    const twin = Object.fromEntries(
      Object.entries(desired).map(([k, value]) => [k, { expected: { value, metadata: { timestamp: at } } }]),
    );
    const msg = code === 200 ? { ...base, twin } : { ...base, code, reason };
    this.#send(hwTopics(id).result, json(msg), false);
    const { namespace, name } = parseDeviceId(id);
    this.#audit(topic, namespace, name, { desired }, code);
    if (code !== 200)
      this.#o.log.warn({ device: `${namespace}/${name}`, code, reason }, 'mqtt desired write refused');
  }

  async #restart(namespace: string, name: string, topic: string) {
    let code = 200;
    try {
      if (!this.#o.restartPod)
        throw Object.assign(new Error('no container runtime on this node'), { code: 503 });
      await this.#o.restartPod(namespace, name);
    } catch (e) {
      code = isStatusError(e) ? e.code : ((e as { code?: number }).code ?? 500);
      this.#o.log.warn(
        { pod: `${namespace}/${name}`, code, err: (e as Error).message },
        'mqtt restart refused',
      );
    }
    this.#audit(topic, namespace, name, null, code);
  }

  #audit(topic: string, namespace: string, name: string, detail: unknown, code: number) {
    this.#o.store.audit.record({
      at: new Date(this.#now()).toISOString(),
      user: this.#user,
      role: 'operator',
      source: this.#status.broker,
      verb: 'MQTT',
      path: topic,
      namespace,
      name,
      detail,
      code,
    });
  }
}
