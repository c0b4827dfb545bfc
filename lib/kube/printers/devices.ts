// Tables for devices.kubeedge.io: upstream's CRDs declare no printer columns (kubectl shows NAME AGE),
// so Outpost chooses them: what a node operator asks first is which mapper drives a device and
// whether it answers.
import type { Device, DeviceModel } from '../devices.ts';
import { translateTimestampSince } from '../duration.ts';
import {
  AGE_COLUMN,
  column,
  NAME_COLUMN,
  type RowCells,
  type Table,
  type ToTableOptions,
  toTable,
} from '../table.ts';

/** The mapper serving a protocol, as the MAPPER column shows it. */
export interface MapperView {
  name: string;
  state: string;
}

export const deviceColumns = [
  NAME_COLUMN,
  column(
    'Protocol',
    'string',
    'The protocol of the mapper that drives the device (spec.protocol.protocolName).',
  ),
  column('Model', 'string', 'The device model the device is an instance of (spec.deviceModelRef.name).'),
  column('State', 'string', 'The state the mapper last reported for the device (status.state).'),
  column('Mapper', 'string', 'The mapper registered for the protocol, and whether it answers.'),
  AGE_COLUMN,
  column('Reported', 'string', 'The twin values the mapper last reported (status.twins[].reported).', {
    priority: 1,
  }),
  column('Desired', 'string', 'The desired values set in the spec (spec.properties[].desired).', {
    priority: 1,
  }),
];

const pairs = (list: [string, string | undefined][]): string => {
  const set = list.filter(([, v]) => v !== undefined && v !== '');
  return set.length ? set.map(([k, v]) => `${k}=${v}`).join(',') : '<none>';
};

/** One device's cells; `mapperFor` looks up the mapper of a protocol. */
export function printDevice(
  d: Device,
  now: number,
  mapperFor: (protocol: string) => MapperView | undefined,
): RowCells {
  const protocol = d.spec?.protocol?.protocolName ?? '';
  const mapper = protocol ? mapperFor(protocol) : undefined;
  return {
    cells: [
      d.metadata.name ?? '',
      protocol || '<none>',
      d.spec?.deviceModelRef?.name || '<none>',
      d.status?.state || '<unknown>',
      mapper ? (mapper.state === 'Running' ? mapper.name : `${mapper.name} (${mapper.state})`) : '<none>',
      translateTimestampSince(d.metadata.creationTimestamp, now),
      pairs((d.status?.twins ?? []).map((t) => [t.propertyName, t.reported?.value])),
      pairs((d.spec?.properties ?? []).map((p) => [p.name, p.desired?.value])),
    ],
  };
}

export function deviceTable(
  devices: readonly Device[],
  now: number,
  mapperFor: (protocol: string) => MapperView | undefined,
  opts: ToTableOptions = {},
): Table {
  return toTable(deviceColumns, devices, (d) => printDevice(d, now, mapperFor), opts);
}

export const deviceModelColumns = [
  NAME_COLUMN,
  column('Protocol', 'string', 'The protocol of the devices of this model (spec.protocol).'),
  column('Properties', 'string', 'The properties the model declares, with their types.'),
  AGE_COLUMN,
];

export function printDeviceModel(m: DeviceModel, now: number): RowCells {
  const props = (m.spec?.properties ?? []).map((p) => `${p.name}:${p.type ?? '?'}`);
  return {
    cells: [
      m.metadata.name ?? '',
      m.spec?.protocol || '<none>',
      props.length ? props.join(',') : '<none>',
      translateTimestampSince(m.metadata.creationTimestamp, now),
    ],
  };
}

export function deviceModelTable(
  models: readonly DeviceModel[],
  now: number,
  opts: ToTableOptions = {},
): Table {
  return toTable(deviceModelColumns, models, (m) => printDeviceModel(m, now), opts);
}
