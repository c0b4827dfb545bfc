import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  eventFieldSelectorFields,
  parseFieldSelector,
  podFieldSelectorFields,
  requiredEquals,
} from '#lib/kube/selectors.ts';
import { assertBadRequest } from '../helpers/status.ts';

const pod = {
  metadata: { name: 'web-0', namespace: 'shop' },
  spec: { nodeName: 'edge-1', restartPolicy: 'Always', serviceAccountName: 'default' },
  status: { phase: 'Running', podIP: '10.0.0.5', podIPs: [{ ip: '10.0.0.5' }, { ip: 'fd00::5' }] },
};
const podSelects = (s: string, obj: unknown = pod): boolean =>
  parseFieldSelector(s, podFieldSelectorFields, 'Pod').matches(obj);

test('field selectors: =, == and != compare the field, a missing field reads as empty', () => {
  assert.ok(podSelects('metadata.name=web-0'));
  assert.ok(podSelects('metadata.name==web-0'));
  assert.not.ok(podSelects('metadata.name=web-1'));
  assert.ok(podSelects('status.phase!=Pending'));
  assert.not.ok(podSelects('status.phase!=Running'));
  assert.ok(podSelects('spec.schedulerName='), 'unset field equals the empty string');
  assert.not.ok(podSelects('spec.nodeName='));
  assert.ok(podSelects('spec.nodeName!='));
});

test('field selectors: terms are ANDed; the empty selector matches everything', () => {
  assert.ok(podSelects('metadata.namespace=shop,spec.nodeName=edge-1,status.podIP=10.0.0.5'));
  assert.not.ok(podSelects('metadata.namespace=shop,spec.nodeName=edge-2'));
  const empty = parseFieldSelector('', podFieldSelectorFields, 'Pod');
  assert.ok(empty.empty);
  assert.ok(empty.matches({}));
  assert.ok(parseFieldSelector(',,', podFieldSelectorFields, 'Pod').empty);
});

test('field selectors: every pod field the apiserver indexes, and the legacy spec.host', () => {
  const p = {
    metadata: { name: 'n', namespace: 'ns' },
    spec: { nodeName: 'node', restartPolicy: 'Never', schedulerName: 'sched', serviceAccountName: 'sa' },
    status: { phase: 'Failed', podIPs: [{ ip: '10.1.1.1' }], nominatedNodeName: 'other' },
  };
  const want =
    'metadata.name=n,metadata.namespace=ns,spec.nodeName=node,spec.restartPolicy=Never,' +
    'spec.schedulerName=sched,spec.serviceAccountName=sa,status.phase=Failed,status.podIP=10.1.1.1,' +
    'status.nominatedNodeName=other,spec.hostNetwork=false,spec.host=node';
  assert.ok(podSelects(want, p));
  assert.ok(podSelects('spec.hostNetwork=true', { spec: { hostNetwork: true } }));
  for (const kind of ['Pod', 'pods']) {
    assert.equal(parseFieldSelector('spec.host=node', podFieldSelectorFields, kind).requirements, [
      { field: 'spec.nodeName', operator: '=', value: 'node' },
    ]);
  }
  assertBadRequest(
    () => parseFieldSelector('spec.host=node', { ...podFieldSelectorFields }, 'Event'),
    'field label not supported: spec.host',
  );
});

test('field selectors: event fields, with source falling back to reportingController', () => {
  const ev = {
    metadata: { name: 'web.1', namespace: 'shop' },
    involvedObject: { kind: 'Pod', namespace: 'shop', name: 'web', uid: 'u1', apiVersion: 'v1' },
    reason: 'Started',
    type: 'Normal',
    reportingController: 'outpost',
  };
  const sel = (s: string): boolean => parseFieldSelector(s, eventFieldSelectorFields, 'Event').matches(ev);
  assert.ok(
    sel('involvedObject.kind=Pod,involvedObject.name=web,involvedObject.uid=u1,involvedObject.apiVersion=v1'),
  );
  assert.ok(sel('involvedObject.namespace=shop,involvedObject.resourceVersion=,involvedObject.fieldPath='));
  assert.ok(sel('reason=Started,type=Normal,reportingComponent=outpost,source=outpost,metadata.name=web.1'));
  assert.not.ok(sel('metadata.namespace=other'));
  assert.ok(
    parseFieldSelector('source=kubelet', eventFieldSelectorFields, 'Event').matches({
      source: { component: 'kubelet' },
    }),
  );
});

test('field selectors: escaped \\, \\= and \\\\ in values; terms split only on unescaped commas', () => {
  const sel = parseFieldSelector('metadata.name=a\\,b\\=c\\\\d', podFieldSelectorFields, 'Pod');
  assert.equal(sel.requirements, [{ field: 'metadata.name', operator: '=', value: 'a,b=c\\d' }]);
  assert.ok(sel.matches({ metadata: { name: 'a,b=c\\d' } }));
  assert.is(sel.toString(), 'metadata.name=a\\,b\\=c\\\\d');
});

test('field selectors: terms are kept sorted and == prints as =', () => {
  const sel = parseFieldSelector('status.phase!=Failed,metadata.name==x', podFieldSelectorFields, 'Pod');
  assert.is(sel.toString(), 'metadata.name=x,status.phase!=Failed');
});

test('requiredEquals exposes the = and == terms for push-down, not the != ones', () => {
  const sel = parseFieldSelector(
    'involvedObject.name==web,metadata.namespace=shop,type!=Warning',
    eventFieldSelectorFields,
    'Event',
  );
  assert.equal(
    [...requiredEquals(sel)],
    [
      ['involvedObject.name', 'web'],
      ['metadata.namespace', 'shop'],
    ],
  );
  assert.is(requiredEquals(parseFieldSelector('', eventFieldSelectorFields, 'Event')).size, 0);
});

const fieldRejected: [string, string][] = [
  ['metadata.name', "invalid selector: 'metadata.name'; can't understand 'metadata.name'"],
  ['status.phase=Running,bogus', "invalid selector: 'status.phase=Running,bogus'; can't understand 'bogus'"],
  ['metadata.name=a=b', 'invalid field selector: unescaped character in value: 61'],
  ['metadata.name!==b', 'invalid field selector: unescaped character in value: 61'],
  ['metadata.name=a\\x', 'invalid field selector: invalid escape sequence: \\x'],
  ['metadata.name=a\\', 'invalid field selector: invalid escape sequence: \\'],
  ['spec.containers=x', 'field label not supported: spec.containers'],
  ['metadata.name=a, status.phase=Running', 'field label not supported:  status.phase'],
  ['=x', 'field label not supported: '],
];

for (const [selector, message] of fieldRejected) {
  test(`field selectors: rejects ${JSON.stringify(selector)}`, () => {
    assertBadRequest(() => parseFieldSelector(selector, podFieldSelectorFields, 'Pod'), message);
  });
}

test('field selectors: syntax errors win over unsupported fields, in sorted term order', () => {
  assertBadRequest(
    () => parseFieldSelector('zzz=1,aaa', podFieldSelectorFields, 'Pod'),
    "invalid selector: 'zzz=1,aaa'; can't understand 'aaa'",
  );
  assertBadRequest(
    () => parseFieldSelector('z=1,y=2', podFieldSelectorFields, 'Pod'),
    'field label not supported: y',
  );
});

test('field selectors: a kind that indexes only metadata answers as the apiserver does by default', () => {
  const meta = { 'metadata.name': (o: { metadata?: { name?: string } }) => o.metadata?.name };
  assertBadRequest(
    () => parseFieldSelector('data.x=1', meta, 'ConfigMap'),
    '"data.x" is not a known field selector: only "metadata.name", "metadata.namespace"',
  );
  assertBadRequest(
    () => parseFieldSelector('spec.host=n', meta, 'ConfigMap'),
    '"spec.host" is not a known field selector: only "metadata.name", "metadata.namespace"',
  );
});

test.run();
