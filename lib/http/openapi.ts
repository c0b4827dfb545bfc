// The OpenAPI v3 discovery kubectl reads before edit, replace and apply: kubectl validates on the
// client unless the server's OpenAPI says a PATCH takes the `fieldValidation` query parameter, and
// with no OpenAPI at all it refuses the edit ("... is invalid"). Outpost publishes a document per
// group version that declares the operations it serves on its writable resources.
import { DEVICE_GROUP, DEVICE_VERSION } from '#lib/kube/devices.ts';

/** The group versions with a document, by their `/openapi/v3` path key. */
export const OPENAPI_GROUP_VERSIONS = [`apis/${DEVICE_GROUP}/${DEVICE_VERSION}`];

const QUERY = (name: string, description: string) => ({
  name,
  in: 'query',
  description,
  schema: { type: 'string', uniqueItems: true },
});

const PATH_PARAM = (name: string) => ({ name, in: 'path', required: true, schema: { type: 'string' } });

function operation(action: string, kind: string, op: string) {
  return {
    operationId: `${op}DevicesKubeedgeIoV1beta1Namespaced${kind}`,
    tags: ['devicesKubeedgeIo_v1beta1'],
    parameters: [
      QUERY('dryRun', 'not supported by Outpost'),
      QUERY('fieldManager', 'accepted and ignored'),
      QUERY('fieldValidation', 'accepted; unknown fields are kept, as the CRD preserves them'),
    ],
    responses: { '200': { description: 'OK' } },
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': { group: DEVICE_GROUP, version: DEVICE_VERSION, kind },
  };
}

/** The OpenAPI v3 document of devices.kubeedge.io/v1beta1. */
export function devicesOpenApi() {
  const item = `/apis/${DEVICE_GROUP}/${DEVICE_VERSION}/namespaces/{namespace}/devices/{name}`;
  return {
    openapi: '3.0.0',
    info: { title: 'Outpost', version: DEVICE_VERSION },
    paths: {
      [item]: {
        parameters: [PATH_PARAM('name'), PATH_PARAM('namespace')],
        get: { ...operation('get', 'Device', 'read'), parameters: [] },
        put: operation('put', 'Device', 'replace'),
        patch: operation('patch', 'Device', 'patch'),
      },
    },
  };
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
