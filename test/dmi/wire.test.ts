import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { fromAny, fromCustomized, toAny, toCustomized } from '#lib/dmi/any.ts';
import { deviceFromPb, deviceToPb } from '#lib/dmi/convert.ts';
import { managerService, mapperService } from '#lib/dmi/grpc.ts';
import type { Device, PbDevice } from '#lib/dmi/types.ts';

const hex = (b: Buffer | Uint8Array) => Buffer.from(b).toString('hex');

test('both services declare the upstream RPCs under package v1beta1', () => {
  assert.is(managerService().MapperRegister?.path, '/v1beta1.DeviceManagerService/MapperRegister');
  for (const m of ['ReportDeviceStatus', 'ReportDeviceStates']) assert.ok(managerService()[m], m);
  for (const m of [
    'RegisterDevice',
    'RemoveDevice',
    'UpdateDevice',
    'CreateDeviceModel',
    'RemoveDeviceModel',
    'UpdateDeviceModel',
    'GetDevice',
  ])
    assert.is(mapperService()[m]?.path, `/v1beta1.DeviceMapperService/${m}`);
});

test('MapperRegisterRequest uses the upstream field numbers', () => {
  const m = managerService().MapperRegister!;
  const wire = m.requestSerialize({
    withData: true,
    mapper: { name: 'm', apiVersion: 'v1beta1', protocol: 'p', address: Buffer.from('/s') },
  });
  // withData (1) = 1; mapper (2) { name (1) "m", api_version (3) "v1beta1", protocol (4) "p", address (5) "/s" }
  const mapper = ['0a016d', '1a0776316265746131', '220170', '2a022f73'].join('');
  assert.is(hex(wire), `080112${(mapper.length / 2).toString(16).padStart(2, '0')}${mapper}`);
});

test('Twin and TwinProperty use the upstream field numbers', () => {
  const m = managerService().ReportDeviceStatus!;
  const wire = m.requestSerialize({
    deviceName: 'd',
    deviceNamespace: 'ns',
    reportedDevice: { twins: [{ propertyName: 't', reported: { value: '1', metadata: {} } }] },
  });
  // deviceName (1) "d"; reportedDevice (2) { twins (1) { propertyName (1) "t", reported (3) { value (1) "1" } } }; deviceNamespace (3) "ns"
  assert.is(hex(wire), ['0a0164', '120a', '0a08', '0a0174', '1a03', '0a0131', '1a026e73'].join(''));
});

test('configData values travel as google.protobuf wrappers in Any, as edgecore packs them', () => {
  const s = toAny('502')!;
  assert.is(s.type_url, 'type.googleapis.com/google.protobuf.StringValue');
  assert.is(hex(s.value), '0a03353032');
  const f = toAny(0.1)!;
  assert.is(f.type_url, 'type.googleapis.com/google.protobuf.FloatValue');
  assert.is(fromAny(f), 0.1);
  assert.is(fromAny(toAny(true)!), true);
  assert.is(fromAny(toAny(false)!), false);
  assert.is(fromAny(toAny(-3)!), -3);
  assert.is(
    fromAny({ type_url: 'type.googleapis.com/google.protobuf.Int64Value', value: Buffer.from([0x08, 0x2a]) }),
    42,
  );
  assert.equal(fromCustomized(toCustomized({ a: 'x', b: 7, c: { nested: 1 } })), {
    a: 'x',
    b: 7,
    c: '{"nested":1}',
  });
});

test('a device survives the trip to a mapper and back', () => {
  const d: Device = {
    apiVersion: 'devices.kubeedge.io/v1beta1',
    kind: 'Device',
    metadata: { name: 'thermo', namespace: 'lab' },
    spec: {
      deviceModelRef: { name: 'model' },
      protocol: { protocolName: 'virtual', configData: { ambient: 18, port: '/dev/ttyS0' } },
      properties: [
        {
          name: 'target',
          desired: { value: '22' },
          reportCycle: 1_000_000_000,
          visitors: { protocolName: 'virtual', configData: { register: 3 } },
        },
      ],
    },
    status: { twins: [{ propertyName: 'target', reported: { value: '21' } }] },
  };
  const update = mapperService().UpdateDevice!;
  const back = update.requestDeserialize(update.requestSerialize({ device: deviceToPb(d) })) as {
    device: PbDevice;
  };
  assert.is(back.device.spec?.deviceModelReference, 'model');
  assert.is(back.device.spec?.properties[0]?.reportCycle, '1000000000');
  const round = deviceFromPb(back.device);
  assert.equal(round.spec, d.spec);
  assert.equal(round.status, d.status);
});

test.run();
