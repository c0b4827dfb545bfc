// OpenAPI v3, one document per group version, built on the first request and kept (never at
// start-up). kubectl reads it for `explain` (the schemas, found by x-kubernetes-group-version-kind)
// and before create, apply, edit and replace: a PATCH that declares `fieldValidation` makes kubectl
// 1.29+ leave validation to the server. PATCH operations declare no request body types on purpose:
// kubectl would then compute apply patches from these schemas instead of its built-in types.
import { createHash } from 'node:crypto';
import { DEVICE_GROUP, DEVICE_VERSION } from '#lib/kube/devices.ts';
import { coreSchemas } from '#lib/kube/openapi/core.ts';
import { V1 } from '#lib/kube/openapi/core-ref.ts';
import { DEVICES, deviceSchemas } from '#lib/kube/openapi/devices.ts';
import { REF_PREFIX, type Schema } from '#lib/kube/openapi/schema.ts';
import { StatusError } from '#lib/kube/status.ts';
import { type ApiResource, apiGroups, coreResources } from './discovery.ts';
import type { AppContext } from './env.ts';
import { NO_CACHE } from './negotiate.ts';

interface GroupVersion {
  group: string;
  version: string;
  /** Path prefix: `/api/v1` or `/apis/{group}/{version}`. */
  prefix: string;
  /** Schema name prefix of the group's kinds. */
  schemaPrefix: string;
  resources: () => ApiResource[];
  schemas: () => Record<string, Schema>;
}

const GROUP_VERSIONS: Record<string, GroupVersion> = {
  'api/v1': {
    group: '',
    version: 'v1',
    prefix: '/api/v1',
    schemaPrefix: V1,
    resources: () => coreResources,
    schemas: coreSchemas,
  },
  [`apis/${DEVICE_GROUP}/${DEVICE_VERSION}`]: {
    group: DEVICE_GROUP,
    version: DEVICE_VERSION,
    prefix: `/apis/${DEVICE_GROUP}/${DEVICE_VERSION}`,
    schemaPrefix: DEVICES,
    resources: () => apiGroups.find((g) => g.name === DEVICE_GROUP)?.resources ?? [],
    schemas: deviceSchemas,
  },
};

/** The group versions with a document, by their `/openapi/v3` path key. */
export const OPENAPI_GROUP_VERSIONS = Object.keys(GROUP_VERSIONS);

const query = (name: string, description: string) => ({
  name,
  in: 'query',
  description,
  schema: { type: 'string', uniqueItems: true },
});

const WRITE_PARAMS = [
  query('dryRun', 'All: validate and answer, store nothing.'),
  query('fieldManager', 'Name of the writer, recorded in managedFields.'),
  query('fieldValidation', 'Accepted: Ignore, Warn or Strict (Outpost does not refuse unknown fields).'),
];

/** Which HTTP method on which path (item or collection) serves a discovery verb. */
const VERBS: Record<string, { method: string; on: 'item' | 'collection'; op: string; write: boolean }> = {
  list: { method: 'get', on: 'collection', op: 'list', write: false },
  create: { method: 'post', on: 'collection', op: 'create', write: true },
  deletecollection: { method: 'delete', on: 'collection', op: 'deleteCollection', write: true },
  get: { method: 'get', on: 'item', op: 'read', write: false },
  update: { method: 'put', on: 'item', op: 'replace', write: true },
  patch: { method: 'patch', on: 'item', op: 'patch', write: true },
  delete: { method: 'delete', on: 'item', op: 'delete', write: true },
};

function paths(gv: GroupVersion, schemas: Record<string, Schema>) {
  const out: Record<string, Record<string, unknown>> = {};
  const tag = `${gv.group.replaceAll('.', '_') || 'core'}_${gv.version}`;
  for (const res of gv.resources()) {
    const [resource = '', sub] = res.name.split('/');
    const base = res.namespaced
      ? `${gv.prefix}/namespaces/{namespace}/${resource}`
      : `${gv.prefix}/${resource}`;
    const gvk = { group: gv.group, version: gv.version, kind: res.kind };
    const schema = `${gv.schemaPrefix}${res.kind}`;
    for (const verb of res.verbs) {
      const how = VERBS[verb];
      if (!how) continue; // watch is list with ?watch=true
      // A subresource is one path under the item for each of its verbs (create is a POST there).
      const path = sub ? `${base}/{name}/${sub}` : how.on === 'item' ? `${base}/{name}` : base;
      const method = sub && verb === 'create' ? 'post' : how.method;
      const isList = how.on === 'collection' && !sub && verb !== 'create';
      const returned = isList ? `${schema}List` : schema;
      const ns = res.namespaced ? 'Namespaced' : '';
      const entry = out[path] ?? {};
      out[path] = entry;
      entry[method] = {
        operationId: `${how.op}${tag}${ns}${res.kind}${sub ? sub[0]!.toUpperCase() + sub.slice(1) : ''}`,
        tags: [tag],
        parameters: how.write ? WRITE_PARAMS : [],
        responses: {
          '200': schemas[returned]
            ? {
                description: 'OK',
                content: { 'application/json': { schema: { $ref: REF_PREFIX + returned } } },
              }
            : { description: 'OK' },
        },
        'x-kubernetes-action': verb === 'create' ? 'post' : verb === 'update' ? 'put' : verb,
        'x-kubernetes-group-version-kind': gvk,
      };
    }
  }
  return out;
}

/** Answers the v3 document of `key` as kube-apiserver does (JSON, never cached by the client). */
export function serveOpenApiV3(c: AppContext, key: string): Response {
  const doc = openApiV3(key);
  if (!doc) throw new StatusError(404, 'NotFound', 'the server could not find the requested resource');
  return c.body(doc.body, 200, { 'Content-Type': 'application/json', ...NO_CACHE });
}

const documents = new Map<string, { body: string; hash: string }>();

/** The OpenAPI v3 document of one group version (`api/v1`, ...) and its hash, or undefined. */
export function openApiV3(key: string): { body: string; hash: string } | undefined {
  const cached = documents.get(key);
  if (cached) return cached;
  const gv = GROUP_VERSIONS[key];
  if (!gv) return undefined;
  const schemas = gv.schemas();
  const body = JSON.stringify({
    openapi: '3.0.0',
    info: { title: 'Outpost', version: gv.version },
    paths: paths(gv, schemas),
    components: { schemas },
  });
  const doc = { body, hash: createHash('sha512').update(body).digest('hex').toUpperCase() };
  documents.set(key, doc);
  return doc;
}

/**
 * The OpenAPI v2 document kubectl 1.27 and 1.28 read before an edit (in gnostic's protobuf form;
 * JSON for other clients). It declares no types, so kubectl's client-side validation has no schema
 * to apply and lets the server validate; without it those versions refuse every edit.
 */
export function openApiV2(protobuf: boolean): { body: string | Uint8Array<ArrayBuffer>; type: string } {
  const title = 'Outpost';
  const version = DEVICE_VERSION;
  if (!protobuf) {
    return {
      body: JSON.stringify({ swagger: '2.0', info: { title, version }, paths: {} }),
      type: 'application/json',
    };
  }
  // gnostic openapi_v2.Document { swagger (1) "2.0", info (2) { title (1), version (2) } }
  const str = (field: number, s: string) => [(field << 3) | 2, Buffer.byteLength(s), ...Buffer.from(s)];
  const info = [...str(1, title), ...str(2, version)];
  return {
    body: Uint8Array.from([...str(1, '2.0'), (2 << 3) | 2, info.length, ...info]),
    // What kube-openapi answers (the Accept form with '@' is not a valid media type for Go's parser).
    type: 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf',
  };
}
