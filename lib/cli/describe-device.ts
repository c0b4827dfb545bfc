// `outpost describe device NAME`: what kubectl describe prints for a custom resource (name, labels,
// annotations, events), plus what an operator asks of a device: its mapper, its state, and per
// property the desired value next to what the mapper observed and what the device reported.
import type { Device, DeviceModel } from '#lib/kube/devices.ts';
import type { CoreEvent } from '#lib/kube/printers/events.ts';
import type { Table } from '#lib/kube/table.ts';
import { type ApiClient, CliError, TABLE_ACCEPT } from './client.ts';
import {
  describeEvents,
  LEVEL_0,
  LEVEL_1,
  PrefixWriter,
  printAnnotationsMultiline,
  printLabelsMultiline,
  rfc1123z,
} from './describe-writer.ts';
import type { Io } from './get.ts';
import { noResourcesFound } from './print-table.ts';

const or = (v: string | undefined | null, dflt = '<none>') =>
  v === undefined || v === null || v === '' ? dflt : v;

/** The describe text of a device, its model (when found), its mapper cell and its events. */
export function describeDevice(
  d: Device,
  model: DeviceModel | undefined,
  mapper: string,
  events: readonly CoreEvent[] | undefined,
  now: number,
): string {
  const w = new PrefixWriter();
  w.write(LEVEL_0, `Name:\t${d.metadata.name ?? ''}\n`);
  w.write(LEVEL_0, `Namespace:\t${d.metadata.namespace ?? ''}\n`);
  printLabelsMultiline(w, 'Labels', d.metadata.labels);
  printAnnotationsMultiline(w, 'Annotations', d.metadata.annotations);
  w.write(LEVEL_0, `API Version:\t${d.apiVersion ?? ''}\n`);
  w.write(LEVEL_0, `Kind:\t${d.kind ?? 'Device'}\n`);
  w.write(LEVEL_0, `Creation Timestamp:\t${rfc1123z(d.metadata.creationTimestamp)}\n`);
  w.write(LEVEL_0, `Protocol:\t${or(d.spec.protocol?.protocolName)}\n`);
  const config = Object.entries(d.spec.protocol?.configData ?? {});
  if (config.length) {
    w.write(LEVEL_0, 'Protocol Config:\n');
    for (const [k, v] of config)
      w.write(LEVEL_1, `${k}:\t${typeof v === 'string' ? v : JSON.stringify(v)}\n`);
  }
  w.write(
    LEVEL_0,
    `Model:\t${or(d.spec.deviceModelRef?.name)}${d.spec.deviceModelRef?.name && !model ? ' (not found)' : ''}\n`,
  );
  w.write(LEVEL_0, `Mapper:\t${mapper}\n`);
  w.write(LEVEL_0, `State:\t${or(d.status?.state, '<unknown>')}\n`);
  w.write(LEVEL_0, `Last Online Time:\t${or(d.status?.lastOnlineTime)}\n`);
  w.flush();
  const props = d.spec.properties ?? [];
  const twins = d.status?.twins ?? [];
  const names = [
    ...props.map((p) => p.name),
    ...twins.map((t) => t.propertyName).filter((n) => !props.some((p) => p.name === n)),
  ];
  if (names.length === 0) w.write(LEVEL_0, 'Twins:\t<none>\n');
  else {
    w.write(LEVEL_0, 'Twins:\n');
    w.write(LEVEL_1, 'Property\tType\tAccess\tDesired\tObserved Desired\tReported\n');
    w.write(LEVEL_1, '--------\t----\t------\t-------\t----------------\t--------\n');
    for (const n of names) {
      const mp = model?.spec.properties?.find((p) => p.name === n);
      const desired = props.find((p) => p.name === n)?.desired?.value;
      const twin = twins.find((t) => t.propertyName === n);
      const unit = mp?.unit ? ` ${mp.unit}` : '';
      const reported = twin?.reported?.value;
      w.write(
        LEVEL_1,
        `${n}\t${or(mp?.type)}\t${or(mp?.accessMode)}\t${or(desired)}\t${or(twin?.observedDesired?.value)}\t${reported ? `${reported}${unit}` : '<none>'}\n`,
      );
    }
    w.flush();
  }
  if (events) describeEvents(w, events, now);
  return w.toString();
}

/** What `outpost describe` passes on (its DescribeOptions). */
export interface DescribeDeviceOptions {
  namespace: string;
  allNamespaces: boolean;
  selector?: string | undefined;
  showEvents: boolean;
  now?: () => number;
}

const devicesPath = (ns: string | undefined) =>
  ns === undefined
    ? '/apis/devices.kubeedge.io/v1beta1/devices'
    : `/apis/devices.kubeedge.io/v1beta1/namespaces/${encodeURIComponent(ns)}/devices`;

async function describeOne(client: ApiClient, d: Device, o: DescribeDeviceOptions): Promise<string> {
  const { name = '', namespace = 'default' } = d.metadata;
  const path = `${devicesPath(namespace)}/${encodeURIComponent(name)}`;
  // The Table row carries the MAPPER column: the mapper of the protocol and whether it answers.
  const row = await client.json<Table>(path, { accept: TABLE_ACCEPT });
  const col = row.columnDefinitions.findIndex((c) => c.name === 'Mapper');
  const mapper = String(row.rows[0]?.cells[col] ?? '<none>');
  const ref = d.spec.deviceModelRef?.name;
  const model = ref
    ? await client
        .json<DeviceModel>(
          `/apis/devices.kubeedge.io/v1beta1/namespaces/${encodeURIComponent(namespace)}/devicemodels/${encodeURIComponent(ref)}`,
        )
        .catch(() => undefined)
    : undefined;
  let events: CoreEvent[] | undefined;
  if (o.showEvents) {
    const fieldSelector = `involvedObject.kind=Device,involvedObject.name=${name},involvedObject.namespace=${namespace}`;
    const list = await client
      .json<{ items: CoreEvent[] }>(`/api/v1/namespaces/${encodeURIComponent(namespace)}/events`, {
        query: { fieldSelector },
      })
      .catch(() => ({ items: [] }));
    events = list.items;
  }
  return describeDevice(d, model, mapper, events, (o.now ?? Date.now)());
}

/**
 * `outpost describe device [NAME...]`: each named device (or every device of the namespace, or those
 * matching `-l`), with its model, mapper and events. Errors print like kubectl's and make it exit 1.
 */
export async function describeDevices(
  client: ApiClient,
  names: string[],
  o: DescribeDeviceOptions,
  io: Io,
): Promise<number> {
  const texts: string[] = [];
  if (names.length === 0) {
    const ns = o.allNamespaces ? undefined : o.namespace;
    const list = await client.json<{ items: Device[] }>(devicesPath(ns), {
      query: { labelSelector: o.selector },
    });
    for (const d of list.items) texts.push(await describeOne(client, d, o));
    if (texts.length === 0) io.err(noResourcesFound(ns));
    io.out(texts.join('\n\n'));
    return 0;
  }
  if (o.allNamespaces)
    throw new CliError('error: a resource cannot be retrieved by name across all namespaces');
  let failed = false;
  for (const name of names) {
    try {
      const d = await client.json<Device>(`${devicesPath(o.namespace)}/${encodeURIComponent(name)}`);
      texts.push(await describeOne(client, d, o));
    } catch (e) {
      if (!(e instanceof CliError)) throw e;
      failed = true;
      io.err(`${e.message}\n`);
    }
  }
  io.out(texts.join('\n\n'));
  return failed ? 1 : 0;
}

/** The entry `outpost describe` dispatches `device` to (names in one namespace). */
export function describeDeviceCommand(
  client: ApiClient,
  namespace: string,
  names: string[],
  opts: { showEvents: boolean; now?: number },
  io: Io,
): Promise<number> {
  const now = opts.now;
  return describeDevices(
    client,
    names,
    {
      namespace,
      allNamespaces: false,
      showEvents: opts.showEvents,
      ...(now === undefined ? {} : { now: () => now }),
    },
    io,
  );
}
