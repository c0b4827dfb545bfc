import type { NetworkInterfaceInfo } from 'node:os';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { defaultRouteInterface, nodeIP, nodeIPv4 } from '#lib/pods/runtime/node-ip.ts';

const v4 = (address: string, internal = false) =>
  ({
    address,
    family: 'IPv4',
    internal,
    netmask: '255.255.255.0',
    mac: '',
    cidr: null,
  }) as NetworkInterfaceInfo;
const v6 = (address: string) =>
  ({
    address,
    family: 'IPv6',
    internal: false,
    netmask: 'ffff::',
    mac: '',
    cidr: null,
    scopeid: 0,
  }) as NetworkInterfaceInfo;

const HEADER = 'Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT';
const route = (iface: string, dest: string, flags: string, metric: number, mask = dest) =>
  `${iface}\t${dest}\t0101A8C0\t${flags}\t0\t0\t${metric}\t${mask}\t0\t0\t0`;

// A node whose container bridge and a pod's veth come before its own interface.
const node = {
  lo: [v4('127.0.0.1', true)],
  cni0: [v4('10.88.0.1')],
  veth1a2b: [v4('169.254.3.1')],
  wlan0: [v6('fe80::1'), v4('192.168.1.20')],
  eth0: [v4('10.0.0.5')],
};

test('the default route with the lowest metric names the interface; routes down or not default do not', () => {
  const table = [
    HEADER,
    route('eth0', '0000A8C0', '0001', 0, '00FFFFFF'),
    route('wlan0', '00000000', '0003', 600),
    route('eth0', '00000000', '0003', 100),
    route('cni0', '00000000', '0002', 1), // not up
  ].join('\n');
  assert.is(defaultRouteInterface(table), 'eth0');
  assert.is(defaultRouteInterface(HEADER), undefined);
});

test("the node's address is its default route interface's IPv4, not a container bridge's", () => {
  const table = [HEADER, route('wlan0', '00000000', '0003', 600)].join('\n');
  assert.is(nodeIPv4(node, table), '192.168.1.20');
});

test('without a default route: the first address of an interface that is not a bridge or veth of containers', () => {
  assert.is(nodeIPv4(node, HEADER), '192.168.1.20');
  // The default route's interface without an IPv4 address falls back the same way.
  assert.is(nodeIPv4(node, [HEADER, route('tun9', '00000000', '0001', 0)].join('\n')), '192.168.1.20');
});

test('only container interfaces: one of theirs; none at all: undefined', () => {
  assert.is(nodeIPv4({ lo: node.lo, cni0: node.cni0 }, HEADER), '10.88.0.1');
  assert.is(nodeIPv4({ lo: node.lo }, HEADER), undefined);
});

test('on this machine: an IPv4 address', () => {
  assert.match(nodeIP(), /^\d+\.\d+\.\d+\.\d+$/);
});

test.run();
