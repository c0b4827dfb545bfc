// Home Assistant MQTT discovery: one retained `<prefix>/<component>/<node>/<object>/config` message
// per entity. Each device and each pod is a Home Assistant device (via the node's), every device
// property an entity (sensor, or number/switch/select/text when writable), every pod a Ready binary
// sensor, a restarts sensor and a restart button. No I/O.
import type { Device, DeviceModel, ModelProperty } from '#lib/kube/devices.ts';
import type { Pod } from '#lib/kube/types.ts';
import { deviceId, type OutpostTopics } from './topics.ts';

export interface DiscoveryContext {
  node: string;
  discoveryPrefix: string;
  topics: OutpostTopics;
  version: string;
}

/** One entity's config topic and payload. */
export interface DiscoveryMessage {
  topic: string;
  payload: Record<string, unknown>;
}

/** Home Assistant's node_id and object_id allow `[a-zA-Z0-9_-]` only. */
export const haId = (s: string): string => s.replace(/[^a-zA-Z0-9_-]/g, '_');

/** Options a model gives a writable string property: annotation `outpost.io/options.<property>: a,b,c`. */
export const OPTIONS_ANNOTATION = 'outpost.io/options.';

const nodeDevice = (ctx: DiscoveryContext) => `outpost_${haId(ctx.node)}`;

const availability = (ctx: DiscoveryContext) => ({ availability: [{ topic: ctx.topics.availability }] });

function configTopic(ctx: DiscoveryContext, component: string, object: string): string {
  return `${ctx.discoveryPrefix}/${component}/${nodeDevice(ctx)}/${haId(object)}/config`;
}

/** Which Home Assistant component a property becomes. */
export function componentOf(
  p: ModelProperty | undefined,
  options: string[] | undefined,
): 'sensor' | 'binary_sensor' | 'number' | 'switch' | 'select' | 'text' {
  const type = (p?.type ?? 'STRING').toUpperCase();
  const writable = p?.accessMode === 'ReadWrite';
  if (type === 'BOOLEAN') return writable ? 'switch' : 'binary_sensor';
  if (!writable) return 'sensor';
  if (type === 'INT' || type === 'FLOAT' || type === 'DOUBLE') return 'number';
  return options?.length ? 'select' : 'text';
}

/** The discovery messages for a device's properties. */
export function deviceDiscovery(
  ctx: DiscoveryContext,
  d: Device,
  model: DeviceModel | undefined,
): DiscoveryMessage[] {
  const ns = d.metadata.namespace ?? 'default';
  const name = d.metadata.name!;
  const id = deviceId(ns, name);
  const haDevice = {
    identifiers: [`${nodeDevice(ctx)}_device_${haId(ns)}_${haId(name)}`],
    name: ns === 'default' ? name : `${ns}/${name}`,
    manufacturer: 'KubeEdge device (Outpost)',
    model: d.spec.deviceModelRef?.name ?? d.spec.protocol?.protocolName ?? 'device',
    via_device: nodeDevice(ctx),
  };
  const props = new Set([
    ...(d.spec.properties ?? []).map((p) => p.name),
    ...(d.status?.twins ?? []).map((t) => t.propertyName),
  ]);
  const out: DiscoveryMessage[] = [];
  for (const prop of props) {
    const mp = model?.spec.properties?.find((p) => p.name === prop);
    const options = model?.metadata.annotations?.[`${OPTIONS_ANNOTATION}${prop}`]
      ?.split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const component = componentOf(mp, options);
    const object = `${ns}_${name}_${prop}`;
    const type = (mp?.type ?? 'STRING').toUpperCase();
    const payload: Record<string, unknown> = {
      name: prop,
      unique_id: `${nodeDevice(ctx)}_${haId(object)}`,
      object_id: haId(`${name}_${prop}`),
      state_topic: ctx.topics.deviceState(id),
      value_template: `{{ value_json[${JSON.stringify(prop)}] | default('') }}`,
      device: haDevice,
      ...availability(ctx),
    };
    if (mp?.unit && component !== 'switch' && component !== 'binary_sensor')
      payload.unit_of_measurement = mp.unit;
    if (component === 'sensor' && (type === 'INT' || type === 'FLOAT' || type === 'DOUBLE'))
      payload.state_class = 'measurement';
    if (component === 'switch' || component === 'binary_sensor') {
      payload.payload_on = 'true';
      payload.payload_off = 'false';
    }
    if (component !== 'sensor' && component !== 'binary_sensor')
      payload.command_topic = ctx.topics.deviceSet(id, prop);
    if (component === 'switch') {
      payload.state_on = 'true';
      payload.state_off = 'false';
    }
    if (component === 'number') {
      if (mp?.minimum !== undefined && mp.minimum !== '') payload.min = Number(mp.minimum);
      if (mp?.maximum !== undefined && mp.maximum !== '') payload.max = Number(mp.maximum);
      payload.step = type === 'INT' ? 1 : 0.1;
      payload.mode = 'box';
    }
    if (component === 'select') payload.options = options;
    out.push({ topic: configTopic(ctx, component, object), payload });
  }
  return out;
}

/** The discovery messages for a pod: Ready, restarts and a restart button. */
export function podDiscovery(ctx: DiscoveryContext, ns: string, name: string): DiscoveryMessage[] {
  const object = `pod_${ns}_${name}`;
  const device = {
    identifiers: [`${nodeDevice(ctx)}_${haId(object)}`],
    name: `${name} (pod in ${ns})`,
    manufacturer: 'Outpost',
    model: 'Pod',
    via_device: nodeDevice(ctx),
  };
  const state = ctx.topics.podState(ns, name);
  const common = { device, ...availability(ctx) };
  return [
    {
      topic: configTopic(ctx, 'binary_sensor', `${object}_ready`),
      payload: {
        name: 'Ready',
        unique_id: `${nodeDevice(ctx)}_${haId(object)}_ready`,
        object_id: haId(`${name}_ready`),
        state_topic: state,
        value_template: '{{ value_json.ready }}',
        device_class: 'running',
        json_attributes_topic: state,
        ...common,
      },
    },
    {
      topic: configTopic(ctx, 'sensor', `${object}_restarts`),
      payload: {
        name: 'Restarts',
        unique_id: `${nodeDevice(ctx)}_${haId(object)}_restarts`,
        object_id: haId(`${name}_restarts`),
        state_topic: state,
        value_template: '{{ value_json.restarts }}',
        state_class: 'measurement',
        icon: 'mdi:restart',
        ...common,
      },
    },
    {
      topic: configTopic(ctx, 'button', `${object}_restart`),
      payload: {
        name: 'Restart',
        unique_id: `${nodeDevice(ctx)}_${haId(object)}_restart`,
        object_id: haId(`${name}_restart`),
        command_topic: ctx.topics.podRestart(ns, name),
        payload_press: 'PRESS',
        device_class: 'restart',
        ...common,
      },
    },
  ];
}

/** The node itself: a connectivity binary sensor on the availability topic, the device pods and devices hang from. */
export function nodeDiscovery(ctx: DiscoveryContext): DiscoveryMessage {
  return {
    topic: configTopic(ctx, 'binary_sensor', 'node_online'),
    payload: {
      name: 'Online',
      unique_id: `${nodeDevice(ctx)}_online`,
      object_id: haId(`outpost_${ctx.node}_online`),
      state_topic: ctx.topics.availability,
      payload_on: 'online',
      payload_off: 'offline',
      device_class: 'connectivity',
      device: {
        identifiers: [nodeDevice(ctx)],
        name: `Outpost ${ctx.node}`,
        manufacturer: 'Outpost',
        model: 'Edge node',
        sw_version: ctx.version,
      },
    },
  };
}

/** What a pod's state topic carries. */
export function podState(p: Pod): { ready: 'ON' | 'OFF'; restarts: number; phase: string } {
  const ready = p.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
  const restarts = (p.status?.containerStatuses ?? []).reduce((n, s) => n + (s.restartCount ?? 0), 0);
  return { ready: ready ? 'ON' : 'OFF', restarts, phase: p.status?.phase ?? 'Pending' };
}

/** What a device's state topic carries: each property's reported value, and the device state. */
export function deviceState(d: Device): Record<string, string> {
  const out: Record<string, string> = {};
  for (const t of d.status?.twins ?? [])
    if (t.reported?.value !== undefined) out[t.propertyName] = t.reported.value;
  return out;
}
