// Kubernetes' protobuf envelope (`k8s\0` + runtime.Unknown) and just enough of the core/v1 messages
// that kubectl sends in protobuf (`kubectl create configmap|secret`) to read them as JSON objects.
// Field numbers are those of k8s.io/api/core/v1/generated.proto and apimachinery's meta/v1.
import { badRequest, StatusError } from './status.ts';
import type { KubeObject } from './types.ts';

type Field = { no: number; wire: number; value: bigint | Buffer };

function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let i = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (i >= buf.length) throw badRequest('protobuf: truncated varint');
      const b = buf[i++]!;
      result |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return result;
      shift += 7n;
    }
  };
  while (i < buf.length) {
    const key = Number(varint());
    const no = key >> 3;
    const wire = key & 7;
    if (wire === 0) out.push({ no, wire, value: varint() });
    else if (wire === 2) {
      const len = Number(varint());
      if (i + len > buf.length) throw badRequest('protobuf: truncated field');
      out.push({ no, wire, value: buf.subarray(i, i + len) });
      i += len;
    } else if (wire === 1) i += 8;
    else if (wire === 5) i += 4;
    else throw badRequest(`protobuf: unsupported wire type ${wire}`);
  }
  return out;
}

const str = (f: Field) => (f.value as Buffer).toString('utf8');
const first = (fs: Field[], no: number) => fs.find((f) => f.no === no);

function map(fs: Field[], no: number, bytes: boolean): Record<string, string> | undefined {
  const entries = fs.filter((f) => f.no === no);
  if (!entries.length) return undefined;
  const out: Record<string, string> = {};
  for (const e of entries) {
    const kv = fields(e.value as Buffer);
    const k = first(kv, 1);
    const v = first(kv, 2);
    const value = v ? (v.value as Buffer) : Buffer.alloc(0);
    out[k ? str(k) : ''] = bytes ? value.toString('base64') : value.toString('utf8');
  }
  return out;
}

function objectMeta(buf: Buffer): Record<string, unknown> {
  const fs = fields(buf);
  const meta: Record<string, unknown> = {};
  const strings: [number, string][] = [
    [1, 'name'],
    [2, 'generateName'],
    [3, 'namespace'],
    [5, 'uid'],
    [6, 'resourceVersion'],
  ];
  for (const [no, key] of strings) {
    const f = first(fs, no);
    if (f) meta[key] = str(f);
  }
  const labels = map(fs, 11, false);
  if (labels) meta.labels = labels;
  const annotations = map(fs, 12, false);
  if (annotations) meta.annotations = annotations;
  const finalizers = fs.filter((f) => f.no === 14).map(str);
  if (finalizers.length) meta.finalizers = finalizers;
  return meta;
}

/** Whether a body is Kubernetes protobuf (starts with the `k8s\0` magic). */
export const isKubeProtobuf = (body: Buffer): boolean =>
  body.length >= 4 && body.subarray(0, 4).equals(Buffer.from('k8s\0', 'latin1'));

/** A ConfigMap or Secret sent as Kubernetes protobuf, as its JSON object; other kinds are 415. */
export function decodeKubeProtobuf(body: Buffer): KubeObject {
  const unknown = fields(body.subarray(4));
  const typeMeta = first(unknown, 1);
  const tm = typeMeta ? fields(typeMeta.value as Buffer) : [];
  const apiVersion = first(tm, 1) ? str(first(tm, 1)!) : '';
  const kind = first(tm, 2) ? str(first(tm, 2)!) : '';
  const raw = first(unknown, 2);
  const fs = raw ? fields(raw.value as Buffer) : [];
  const meta = first(fs, 1);
  const obj: KubeObject = { apiVersion, kind, metadata: meta ? objectMeta(meta.value as Buffer) : {} };
  if (apiVersion === 'v1' && kind === 'ConfigMap') {
    const data = map(fs, 2, false);
    if (data) obj.data = data;
    const binaryData = map(fs, 3, true);
    if (binaryData) obj.binaryData = binaryData;
    const immutable = first(fs, 4);
    if (immutable) obj.immutable = immutable.value === 1n;
    return obj;
  }
  if (apiVersion === 'v1' && kind === 'Secret') {
    const data = map(fs, 2, true);
    if (data) obj.data = data;
    const type = first(fs, 3);
    if (type) obj.type = str(type);
    const stringData = map(fs, 4, false);
    if (stringData) obj.stringData = stringData;
    const immutable = first(fs, 5);
    if (immutable) obj.immutable = immutable.value === 1n;
    return obj;
  }
  throw new StatusError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml (protobuf only for ConfigMap and Secret, not ${apiVersion}/${kind})`,
  );
}
