import { isDeepStrictEqual } from 'node:util';
import { recordUpdate } from '#lib/kube/managed-fields.ts';
import { configMapTable, secretTable } from '#lib/kube/printers/config.ts';
import { parseFieldSelector, parseLabelSelector } from '#lib/kube/selectors.ts';
import { invalid, notFound, type StatusCause, StatusError } from '#lib/kube/status.ts';
import type { Table, ToTableOptions } from '#lib/kube/table.ts';
import { parseIncludeObject } from '#lib/kube/table.ts';
import type { KubeObject } from '#lib/kube/types.ts';
import { checkDnsSubdomain } from '#lib/kube/validate.ts';
import type { Store } from '#lib/store/index.ts';
import { serverSideApply } from './apply.ts';
import { applyPatch, isObject, patchType, readBody } from './body.ts';
import type { AppContext } from './env.ts';
import { coreList, type Listable } from './list.ts';
import { wantsTable } from './negotiate.ts';
import { deleteOptions } from './pod-delete.ts';
import {
  alreadyExists,
  checkNames,
  dryRunOf,
  fieldManagerOf,
  generatedName,
  modified,
  refuseForeign,
  timestamp,
} from './write-options.ts';

/** A namespaced object kind stored whole in the `objects` table. */
export interface ObjectKind {
  kind: 'ConfigMap' | 'Secret';
  resource: 'configmaps' | 'secrets';
  table(items: readonly KubeObject[], now: number, opts: ToTableOptions): Table;
  /** Normalizes a written object in place (Secret: stringData into data, type defaulted). */
  normalize(obj: KubeObject): void;
  validate(obj: KubeObject, old: KubeObject | undefined): StatusCause[];
}

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;

function checkKeys(map: unknown, field: string, value: (v: unknown) => string | undefined): StatusCause[] {
  if (map === undefined || map === null) return [];
  if (!isObject(map)) return [{ field, reason: 'FieldValueTypeInvalid', message: 'must be a map' }];
  const causes: StatusCause[] = [];
  for (const [k, v] of Object.entries(map)) {
    if (k.length > 253 || !CONFIG_KEY.test(k)) {
      causes.push({
        field: `${field}[${k}]`,
        reason: 'FieldValueInvalid',
        message: `Invalid value: "${k}": a valid config key must consist of alphanumeric characters, '-', '_' or '.'`,
      });
    }
    const problem = value(v);
    if (problem) causes.push({ field: `${field}[${k}]`, reason: 'FieldValueInvalid', message: problem });
  }
  return causes;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const isString = (v: unknown) => (typeof v === 'string' ? undefined : 'must be a string');
const isBase64 = (v: unknown) =>
  typeof v === 'string' && BASE64.test(v) ? undefined : 'must be base64-encoded bytes';

function immutableData(obj: KubeObject, old: KubeObject | undefined, fields: string[]): StatusCause[] {
  if (old?.immutable !== true) return [];
  const causes: StatusCause[] = [];
  for (const f of fields) {
    if (!isDeepStrictEqual(old[f] ?? {}, obj[f] ?? {}))
      causes.push({
        field: f,
        reason: 'FieldValueForbidden',
        message: 'Forbidden: field is immutable when `immutable` is set',
      });
  }
  if (obj.immutable !== true)
    causes.push({
      field: 'immutable',
      reason: 'FieldValueForbidden',
      message: 'Forbidden: field is immutable when `immutable` is set',
    });
  return causes;
}

export const configMaps: ObjectKind = {
  kind: 'ConfigMap',
  resource: 'configmaps',
  table: configMapTable,
  normalize: () => {},
  validate: (obj, old) => [
    ...checkKeys(obj.data, 'data', isString),
    ...checkKeys(obj.binaryData, 'binaryData', isBase64),
    ...immutableData(obj, old, ['data', 'binaryData']),
  ],
};

/** The data keys each built-in Secret type requires, as kube-apiserver's ValidateSecret checks them. */
function secretTypeCauses(obj: KubeObject): StatusCause[] {
  const data = isObject(obj.data) ? obj.data : {};
  const required = (key: string): StatusCause => ({
    field: `data[${key}]`,
    reason: 'FieldValueRequired',
    message: 'Required value',
  });
  const json = (key: string): StatusCause[] => {
    if (!(key in data)) return [required(key)];
    try {
      JSON.parse(Buffer.from(String(data[key]), 'base64').toString('utf8'));
      return [];
    } catch (e) {
      return [
        {
          field: `data[${key}]`,
          reason: 'FieldValueInvalid',
          message: `Invalid value: "<secret contents redacted>": ${(e as Error).message}`,
        },
      ];
    }
  };
  switch (obj.type) {
    case 'kubernetes.io/service-account-token':
      return obj.metadata.annotations?.['kubernetes.io/service-account.name']
        ? []
        : [
            {
              field: 'metadata.annotations[kubernetes.io/service-account.name]',
              reason: 'FieldValueRequired',
              message: 'Required value',
            },
          ];
    case 'kubernetes.io/dockercfg':
      return json('.dockercfg');
    case 'kubernetes.io/dockerconfigjson':
      return json('.dockerconfigjson');
    case 'kubernetes.io/basic-auth':
      return 'username' in data || 'password' in data ? [] : [required('username'), required('password')];
    case 'kubernetes.io/ssh-auth':
      return data['ssh-privatekey'] ? [] : [required('ssh-privatekey')];
    case 'kubernetes.io/tls':
      return ['tls.crt', 'tls.key'].filter((k) => !(k in data)).map(required);
    default:
      return [];
  }
}

export const secrets: ObjectKind = {
  kind: 'Secret',
  resource: 'secrets',
  table: secretTable,
  normalize(obj) {
    if (!obj.type) obj.type = 'Opaque';
    if (isObject(obj.stringData)) {
      const data = isObject(obj.data) ? obj.data : {};
      for (const [k, v] of Object.entries(obj.stringData))
        if (typeof v === 'string') data[k] = Buffer.from(v, 'utf8').toString('base64');
      obj.data = data;
    }
    delete obj.stringData;
  },
  validate: (obj, old) => {
    const causes = [...checkKeys(obj.data, 'data', isBase64), ...immutableData(obj, old, ['data'])];
    if (old && old.type !== obj.type)
      causes.push({
        field: 'type',
        reason: 'FieldValueInvalid',
        message: `Invalid value: "${String(obj.type)}": field is immutable`,
      });
    causes.push(...secretTypeCauses(obj));
    return causes;
  },
};

const metadataFields = {
  'metadata.name': (o: KubeObject) => o.metadata.name,
  'metadata.namespace': (o: KubeObject) => o.metadata.namespace,
};

/** ConfigMaps or Secrets as a listable resource. */
export const objectsResource = (store: Store, k: ObjectKind): Listable<KubeObject> => ({
  resource: k.kind,
  listKind: `${k.kind}List`,
  fields: {
    ...metadataFields,
    ...(k.kind === 'Secret' ? { type: (o: KubeObject) => o.type as string } : {}),
  },
  read(namespace, eq, after, limit) {
    const page = store.objects.list(k.kind, { namespace: namespace ?? eq.get('metadata.namespace'), after });
    if (limit === undefined || page.items.length <= limit) return page;
    const items = page.items.slice(0, limit);
    const last = items[limit - 1]!.metadata;
    return { items, resourceVersion: page.resourceVersion, next: [last.namespace!, last.name!] };
  },
  table: (items, now, opts) => k.table(items, now, opts),
});

const SERVER_OWNED = [
  'uid',
  'resourceVersion',
  'creationTimestamp',
  'deletionTimestamp',
  'generation',
  'selfLink',
] as const;

function asObject(k: ObjectKind, body: unknown): KubeObject {
  if (!isObject(body)) throw new StatusError(400, 'BadRequest', `the body must be a ${k.kind} object`);
  if (body.kind !== undefined && body.kind !== k.kind)
    throw new StatusError(400, 'BadRequest', `the body is a ${String(body.kind)}, not a ${k.kind}`);
  if (body.metadata === undefined) body.metadata = {};
  if (!isObject(body.metadata)) throw new StatusError(400, 'BadRequest', 'metadata must be an object');
  return body as unknown as KubeObject;
}

function served(c: AppContext, k: ObjectKind, obj: KubeObject) {
  if (!wantsTable(c)) return c.json(obj);
  const opts = {
    includeObject: parseIncludeObject(c.req.query('includeObject')),
    resourceVersion: obj.metadata.resourceVersion,
  };
  return c.json(k.table([obj], c.var.now(), opts));
}

/** `GET` of one ConfigMap or Secret. */
export function getObject(c: AppContext, k: ObjectKind, namespace: string, name: string) {
  const obj = c.var.store.objects.get(k.kind, namespace, name);
  if (!obj) throw notFound(k.resource, name);
  return served(c, k, obj);
}

function store(
  c: AppContext,
  k: ObjectKind,
  obj: KubeObject,
  old: KubeObject | undefined,
  dryRun: boolean,
  manager: string,
  op: 'Update' | 'Apply' = 'Update',
  /** The applied configuration, when an apply creates the object. */
  config?: KubeObject,
): KubeObject {
  const { namespace, name } = obj.metadata as { namespace: string; name: string };
  obj.apiVersion = 'v1';
  obj.kind = k.kind;
  k.normalize(obj);
  const causes = [...checkDnsSubdomain(name, 'metadata.name'), ...k.validate(obj, old)];
  if (causes.length) throw invalid(k.kind, name, causes);
  recordUpdate(old, obj, manager, op, c.var.now(), {}, config);
  // A dry-run create has no resourceVersion yet, as on the API server; a dry-run update keeps the old one.
  if (dryRun) {
    const { resourceVersion: _, ...metadata } = obj.metadata;
    const rv = old?.metadata.resourceVersion;
    return { ...obj, metadata: rv ? { ...metadata, resourceVersion: rv } : metadata };
  }
  c.var.store.objects.put(obj, 'api');
  return c.var.store.objects.get(k.kind, namespace, name)!;
}

/** `POST` of a ConfigMap or Secret. */
export async function createObject(c: AppContext, k: ObjectKind, namespace: string) {
  const obj = asObject(k, await readBody(c));
  checkNames(obj.metadata, namespace);
  return c.json(create(c, k, namespace, obj, dryRunOf(c), fieldManagerOf(c)), 201);
}

function create(
  c: AppContext,
  k: ObjectKind,
  namespace: string,
  obj: KubeObject,
  dryRun: boolean,
  manager: string,
  applied = false,
): KubeObject {
  const config = applied ? structuredClone(obj) : undefined;
  for (const key of SERVER_OWNED) delete obj.metadata[key];
  obj.metadata.namespace = namespace;
  if (!obj.metadata.name && typeof obj.metadata.generateName === 'string' && obj.metadata.generateName)
    obj.metadata.name = generatedName(obj.metadata.generateName);
  if (obj.metadata.name && c.var.store.objects.get(k.kind, namespace, obj.metadata.name))
    throw alreadyExists(k.resource, obj.metadata.name);
  obj.metadata.creationTimestamp = timestamp(c.var.now());
  if (dryRun) obj.metadata.uid = crypto.randomUUID();
  return store(c, k, obj, undefined, dryRun, manager, applied ? 'Apply' : 'Update', config);
}

function current(c: AppContext, k: ObjectKind, namespace: string, name: string) {
  const rec = c.var.store.objects.record(k.kind, namespace, name);
  if (!rec) throw notFound(k.resource, name);
  refuseForeign(k.resource, name, rec);
  return rec.object;
}

function update(
  c: AppContext,
  k: ObjectKind,
  old: KubeObject,
  next: KubeObject,
  dryRun: boolean,
  manager = fieldManagerOf(c),
  op: 'Update' | 'Apply' = 'Update',
) {
  const { namespace, name } = old.metadata as { namespace: string; name: string };
  checkNames(next.metadata, namespace, name);
  if (next.metadata.resourceVersion && next.metadata.resourceVersion !== old.metadata.resourceVersion)
    throw modified(k.resource, name);
  next.metadata.name = name;
  next.metadata.namespace = namespace;
  for (const key of SERVER_OWNED) {
    if (old.metadata[key] === undefined) delete next.metadata[key];
    else (next.metadata as Record<string, unknown>)[key] = old.metadata[key];
  }
  return c.json(store(c, k, next, old, dryRun, manager, op));
}

/** `PUT` of a ConfigMap or Secret. */
export async function replaceObject(c: AppContext, k: ObjectKind, namespace: string, name: string) {
  const next = asObject(k, await readBody(c));
  const dryRun = dryRunOf(c);
  return update(c, k, current(c, k, namespace, name), next, dryRun);
}

/**
 * `PATCH` of a ConfigMap or Secret: merge, strategic merge (no merge keys in either), JSON patch, or
 * server-side apply (`kubectl apply --server-side`), which also creates a missing object.
 */
export async function patchObject(c: AppContext, k: ObjectKind, namespace: string, name: string) {
  const type = patchType(c, ['json', 'merge', 'strategic', 'apply']);
  const patch = await readBody(c);
  const dryRun = dryRunOf(c);
  if (type === 'apply') {
    return serverSideApply(
      c,
      asObject(k, patch),
      namespace,
      name,
      {},
      {
        current: () =>
          c.var.store.objects.record(k.kind, namespace, name) ? current(c, k, namespace, name) : undefined,
        create: (config, manager) => c.json(create(c, k, namespace, config, dryRun, manager, true), 201),
        update: (old, next, manager) => update(c, k, old, next, dryRun, manager, 'Apply'),
      },
    );
  }
  const old = current(c, k, namespace, name);
  return update(c, k, old, asObject(k, applyPatch(old, type, patch)), dryRun);
}

/** `DELETE` of a ConfigMap or Secret: a `Success` Status naming it, as the API server answers for these kinds. */
export async function deleteObject(c: AppContext, k: ObjectKind, namespace: string, name: string) {
  const opts = await deleteOptions(c);
  const obj = current(c, k, namespace, name);
  const pre = opts.preconditions;
  if (
    (pre?.uid && pre.uid !== obj.metadata.uid) ||
    (pre?.resourceVersion && pre.resourceVersion !== obj.metadata.resourceVersion)
  )
    throw new StatusError(
      409,
      'Conflict',
      `Precondition failed: the ${k.kind} does not match the preconditions`,
      { name, kind: k.resource },
    );
  if (!opts.dryRun) c.var.store.objects.remove(k.kind, namespace, name);
  return c.json({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Success',
    details: { name, kind: k.resource, uid: obj.metadata.uid },
  });
}

/** deletecollection of ConfigMaps or Secrets by selectors; all or nothing when one is not API-owned. */
export async function deleteObjects(c: AppContext, k: ObjectKind, namespace: string) {
  const opts = await deleteOptions(c);
  const r = objectsResource(c.var.store, k);
  const labels = parseLabelSelector(c.req.query('labelSelector') ?? '');
  const fields = parseFieldSelector(
    c.req.query('fieldSelector') ?? '',
    r.fields as Record<string, (o: unknown) => string | undefined>,
    k.resource,
  );
  const items = r
    .read(namespace, new Map())
    .items.filter((o) => labels.matches(o.metadata.labels) && fields.matches(o));
  for (const o of items)
    refuseForeign(
      k.resource,
      o.metadata.name!,
      c.var.store.objects.record(k.kind, namespace, o.metadata.name!)!,
    );
  if (!opts.dryRun)
    c.var.store.metabase.sqlite.transaction(() => {
      for (const o of items) c.var.store.objects.remove(k.kind, namespace, o.metadata.name!);
    })();
  return c.json(coreList(`${k.kind}List`, c.var.store.rv.current, items));
}
