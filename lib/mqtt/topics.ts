// Topic names of the MQTT bridge: KubeEdge's EventBus device topics (`$hw/events/device/{id}/...`)
// and Outpost's own state and command topics for Home Assistant. No I/O.

/**
 * A device's ID on the EventBus topics: its name in namespace `default` (what edgecore uses), else
 * `namespace:name` (`:` never occurs in a Kubernetes name, so the two cannot collide).
 */
export const deviceId = (namespace: string, name: string): string =>
  namespace === 'default' ? name : `${namespace}:${name}`;

/** The inverse of deviceId. */
export function parseDeviceId(id: string): { namespace: string; name: string } {
  const i = id.indexOf(':');
  return i < 0 ? { namespace: 'default', name: id } : { namespace: id.slice(0, i), name: id.slice(i + 1) };
}

const HW = '$hw/events/device';

/** KubeEdge's EventBus topics for one device. */
export const hwTopics = (id: string) => ({
  document: `${HW}/${id}/twin/update/document`,
  delta: `${HW}/${id}/twin/update/delta`,
  state: `${HW}/${id}/state/update`,
  update: `${HW}/${id}/twin/update`,
  result: `${HW}/${id}/twin/update/result`,
});

/** The subscription for desired-value writes (`+` is one level: `.../twin/update/document` does not match). */
export const HW_TWIN_UPDATE = `${HW}/+/twin/update`;

/** `$hw/events/device/{id}/twin/update` → id. */
export function hwUpdateId(topic: string): string | undefined {
  const m = /^\$hw\/events\/device\/([^/]+)\/twin\/update$/.exec(topic);
  return m?.[1];
}

/** Outpost's own topics under `prefix/node`: availability, states and commands for Home Assistant. */
export class OutpostTopics {
  readonly base: string;

  constructor(prefix: string, node: string) {
    this.base = `${prefix.replace(/\/+$/, '')}/${node}`;
  }

  /** `online` / `offline` (retained; `offline` is the last will). */
  get availability(): string {
    return `${this.base}/availability`;
  }

  /** A device's property values as one JSON object (retained). */
  deviceState(id: string): string {
    return `${this.base}/devices/${id}/state`;
  }

  /** Home Assistant writes a property's desired value here (the raw value). */
  deviceSet(id: string, property: string): string {
    return `${this.base}/devices/${id}/${property}/set`;
  }

  /** A pod's readiness, restarts and phase as JSON (retained). */
  podState(namespace: string, name: string): string {
    return `${this.base}/pods/${namespace}/${name}/state`;
  }

  /** Any message here restarts the pod (Home Assistant's button sends `PRESS`). */
  podRestart(namespace: string, name: string): string {
    return `${this.base}/pods/${namespace}/${name}/restart`;
  }

  /** The command subscriptions. */
  get subscriptions(): string[] {
    return [`${this.base}/devices/+/+/set`, `${this.base}/pods/+/+/restart`];
  }

  /** Which command a topic is, if any. */
  command(
    topic: string,
  ):
    | { kind: 'set'; id: string; property: string }
    | { kind: 'restart'; namespace: string; name: string }
    | undefined {
    if (!topic.startsWith(`${this.base}/`)) return undefined;
    const parts = topic.slice(this.base.length + 1).split('/');
    if (parts.length === 4 && parts[0] === 'devices' && parts[3] === 'set')
      return { kind: 'set', id: parts[1]!, property: parts[2]! };
    if (parts.length === 4 && parts[0] === 'pods' && parts[3] === 'restart')
      return { kind: 'restart', namespace: parts[1]!, name: parts[2]! };
    return undefined;
  }
}
