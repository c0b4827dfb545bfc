// The dashboard's sections, server-rendered with Hono JSX. The page script replaces a section with a
// fresh render of it (GET /ui/parts/NAME) when a watch says something changed, so each section is
// rendered in exactly one place.
import type { Role } from '#lib/auth/roles.ts';
import { allows } from '#lib/auth/roles.ts';
import type { Device, DeviceModel } from '#lib/kube/devices.ts';
import { translateTimestampSince } from '#lib/kube/duration.ts';
import { podSummary } from '#lib/kube/printers/pods.ts';
import type { Pod } from '#lib/kube/types.ts';
import type { AuditRecord } from '#lib/store/audit.ts';
import type { ModuleSnapshot } from '#lib/supervisor/modules.ts';

export interface NodeView {
  node: string;
  version: string;
  now: number;
  modules: ModuleSnapshot[];
  runtime?: string | undefined;
  mqtt?: { broker: string; connected: boolean; lastError?: string | undefined } | undefined;
  /** The cloud link (`serve --cloud`): its API server and state. */
  cloud?:
    | { server: string; state: string; lastError?: string | undefined; lastContact?: number | undefined }
    | undefined;
}

/** A table's header row. */
const Head = ({ cols }: { cols: string[] }) => (
  <thead>
    <tr>{cols.map((c) => (c ? <th>{c}</th> : <th />))}</tr>
  </thead>
);

const ok = (good: boolean) => (good ? 'ok' : 'bad');

/** Conditions, runtime, MQTT, cloud link and every module's health. */
export function Summary({ v }: { v: NodeView }) {
  const mod = (name: string) => v.modules.find((m) => m.name === name);
  const ready = v.modules.every((m) => m.state === 'running');
  const runtime = mod('runtime');
  const cloud = v.modules.filter((m) => m.name.startsWith('cloud'));
  const conditions: [string, boolean, string][] = [
    ['Ready', ready, ready ? 'every module runs' : 'some modules are not running'],
    ['MetabaseHealthy', mod('metabase')?.state === 'running', mod('metabase')?.lastError ?? ''],
  ];
  if (runtime)
    conditions.push(['RuntimeReachable', runtime.state === 'running', runtime.lastError ?? v.runtime ?? '']);
  if (v.mqtt)
    conditions.push([
      'MqttConnected',
      v.mqtt.connected,
      v.mqtt.connected ? v.mqtt.broker : (v.mqtt.lastError ?? v.mqtt.broker),
    ]);
  if (v.cloud)
    conditions.push([
      'CloudLinkOnline',
      v.cloud.state === 'online',
      v.cloud.state === 'online'
        ? v.cloud.server
        : `${v.cloud.state}${v.cloud.lastError ? `: ${v.cloud.lastError}` : ''}${
            v.cloud.lastContact
              ? ` (last contact ${translateTimestampSince(new Date(v.cloud.lastContact).toISOString(), v.now)} ago)`
              : ''
          }`,
    ]);
  for (const c of cloud) conditions.push([`Module ${c.name}`, c.state === 'running', c.lastError ?? '']);
  return (
    <section id="summary" data-part="summary">
      <h2>Node {v.node}</h2>
      <p class="muted">
        Outpost {v.version}
        {v.runtime ? ` · runtime ${v.runtime}` : ' · no container runtime'}
        {v.mqtt ? ` · MQTT ${v.mqtt.broker}` : ''}
        {v.cloud ? ` · cloud ${v.cloud.server} (${v.cloud.state})` : ' · no cloud link'}
      </p>
      <table class="grid">
        <Head cols={['Condition', 'Status', 'Message']} />
        <tbody>
          {conditions.map(([type, good, msg]) => (
            <tr data-condition={type}>
              <td>{type}</td>
              <td class={ok(good)}>{good ? 'True' : 'False'}</td>
              <td>{msg}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <details>
        <summary>
          Modules ({v.modules.filter((m) => m.state === 'running').length}/{v.modules.length} running)
        </summary>
        <table class="grid">
          <Head cols={['Module', 'State', 'Restarts', 'Last error']} />
          <tbody>
            {v.modules.map((m) => (
              <tr data-module={m.name}>
                <td>{m.name}</td>
                <td class={ok(m.state === 'running')}>{m.state}</td>
                <td>{m.restarts}</td>
                <td>{m.lastError ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </section>
  );
}

/** Pods with kubectl's READY, STATUS, RESTARTS and AGE; logs for all, restart for operators. */
export function Pods({ pods, now, role }: { pods: Pod[]; now: number; role: Role }) {
  const operator = allows(role, 'operator');
  return (
    <section id="pods" data-part="pods">
      <h2>Pods ({pods.length})</h2>
      <table class="grid">
        <Head cols={['Namespace', 'Name', 'Ready', 'Status', 'Restarts', 'Age', '']} />
        <tbody>
          {pods.map((p) => {
            const s = podSummary(p, now);
            const ns = p.metadata.namespace ?? 'default';
            const name = p.metadata.name ?? '';
            const containers = (p.spec?.containers ?? []).map((c) => c.name).join(',');
            return (
              <tr data-pod={`${ns}/${name}`}>
                <td>{ns}</td>
                <td>{name}</td>
                <td>{s.ready}</td>
                <td class={s.status === 'Running' || s.status === 'Completed' ? 'ok' : 'warn'}>{s.status}</td>
                <td data-restarts>{s.restarts}</td>
                <td>{translateTimestampSince(p.metadata.creationTimestamp, now)}</td>
                <td class="actions">
                  <button type="button" data-logs={`${ns}/${name}`} data-containers={containers}>
                    Logs
                  </button>
                  {operator ? (
                    <button type="button" data-restart={`${ns}/${name}`}>
                      Restart
                    </button>
                  ) : null}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </section>
  );
}

/** Devices with their twins (desired, reported) and, for operators, a desired-value form per writable property. */
export function Devices({
  devices,
  models,
  now,
  role,
}: {
  devices: Device[];
  models: DeviceModel[];
  now: number;
  role: Role;
}) {
  const operator = allows(role, 'operator');
  return (
    <section id="devices" data-part="devices">
      <h2>Devices ({devices.length})</h2>
      {devices.map((d) => {
        const ns = d.metadata.namespace ?? 'default';
        const name = d.metadata.name ?? '';
        const model = models.find(
          (m) => m.metadata.namespace === ns && m.metadata.name === d.spec.deviceModelRef?.name,
        );
        const props = new Set([
          ...(d.spec.properties ?? []).map((p) => p.name),
          ...(d.status?.twins ?? []).map((t) => t.propertyName),
        ]);
        return (
          <article class="device" data-device={`${ns}/${name}`}>
            <h3>
              {name}{' '}
              <span class="muted">
                {ns} · {d.spec.protocol?.protocolName} · {d.status?.state ?? 'no state'}
              </span>
            </h3>
            <table class="grid">
              <Head cols={['Property', 'Desired', 'Reported', '']} />
              <tbody>
                {[...props].map((prop) => {
                  const mp = model?.spec.properties?.find((p) => p.name === prop);
                  const want = d.spec.properties?.find((p) => p.name === prop)?.desired?.value;
                  const got = d.status?.twins?.find((t) => t.propertyName === prop)?.reported?.value;
                  const writable = mp?.accessMode === 'ReadWrite';
                  return (
                    <tr data-property={prop}>
                      <td>
                        {prop} <span class="muted">{mp?.type ?? ''}</span>
                      </td>
                      <td data-desired>{want ?? '—'}</td>
                      <td data-reported>
                        {got ?? '—'}
                        {got !== undefined && mp?.unit ? ` ${mp.unit}` : ''}
                      </td>
                      <td>
                        {operator && writable ? (
                          <form class="desired" data-device={`${ns}/${name}`} data-property={prop}>
                            {(mp?.type ?? '').toUpperCase() === 'BOOLEAN' ? (
                              <select name="value" aria-label={`desired ${prop}`}>
                                <option value="true" selected={want === 'true'}>
                                  true
                                </option>
                                <option value="false" selected={want === 'false'}>
                                  false
                                </option>
                              </select>
                            ) : (
                              <input
                                name="value"
                                aria-label={`desired ${prop}`}
                                value={want ?? ''}
                                size={6}
                              />
                            )}
                            <button type="submit">Set</button>
                            <output />
                          </form>
                        ) : null}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
            <p class="muted">
              model {d.spec.deviceModelRef?.name ?? '—'} · last online {d.status?.lastOnlineTime ?? 'never'} ·
              age {translateTimestampSince(d.metadata.creationTimestamp, now)}
            </p>
          </article>
        );
      })}
    </section>
  );
}

interface EventRow {
  type?: string;
  reason?: string;
  message?: string;
  involvedObject?: { kind?: string; name?: string; namespace?: string };
  lastTimestamp?: string | null;
  eventTime?: string | null;
  count?: number;
}

/** The most recent events, newest first. */
export function Events({ events, now }: { events: EventRow[]; now: number }) {
  return (
    <section id="events" data-part="events">
      <h2>Recent events</h2>
      <table class="grid">
        <Head cols={['Age', 'Type', 'Reason', 'Object', 'Message']} />
        <tbody>
          {events.map((e) => (
            <tr>
              <td>{translateTimestampSince(e.lastTimestamp ?? e.eventTime, now)}</td>
              <td class={e.type === 'Warning' ? 'warn' : ''}>{e.type}</td>
              <td>{e.reason}</td>
              <td>
                {e.involvedObject?.kind?.toLowerCase()}/{e.involvedObject?.name}
              </td>
              <td class="msg">
                {e.message}
                {(e.count ?? 1) > 1 ? ` (×${e.count})` : ''}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** The audit trail (admins only). */
export function Audit({ records }: { records: AuditRecord[] }) {
  return (
    <section id="audit" data-part="audit">
      <h2>Audit trail</h2>
      <table class="grid">
        <Head cols={['When', 'User', 'Verb', 'Path', 'Code']} />
        <tbody>
          {records.map((r) => (
            <tr>
              <td>{r.at.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}</td>
              <td>
                {r.user} <span class="muted">({r.role})</span>
              </td>
              <td>{r.verb}</td>
              <td class="path">{r.path}</td>
              <td class={r.code < 400 ? 'ok' : 'bad'}>{r.code}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
