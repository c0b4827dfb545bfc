// Object and list metadata (meta/v1) as Outpost stores and serves it.
import {
  anyObject,
  bool,
  INT_OR_STRING,
  int,
  list,
  obj,
  QUANTITY,
  ref,
  type Schema,
  str,
  stringMap,
  strings,
  time,
} from './schema.ts';

export const META = 'io.k8s.apimachinery.pkg.apis.meta.v1.';

/** `metadata` of a top-level object. */
export const objectMeta = (): Schema => ref(`${META}ObjectMeta`, 'Standard object metadata.');

export function metaSchemas(): Record<string, Schema> {
  return {
    [INT_OR_STRING]: { format: 'int-or-string', 'x-kubernetes-int-or-string': true },
    [QUANTITY]: { format: 'quantity', 'x-kubernetes-int-or-string': true },
    [`${META}ObjectMeta`]: obj('Metadata every stored object has.', {
      name: str('Unique within a namespace. Required when creating, unless generateName is set.'),
      generateName: str('A prefix the server completes with five random characters when name is empty.'),
      namespace: str('The namespace the object belongs to (default "default").'),
      uid: str('Unique in time and space; set by the server, never reused.'),
      resourceVersion: str(
        'Opaque version of the object, changed on every write; an update carrying an older one is refused with 409 Conflict.',
      ),
      generation: int('Sequence number of a change to the desired state; set by the server.', 'int64'),
      creationTimestamp: time('When the server stored the object first.'),
      deletionTimestamp: time('When the object will be removed; set by a graceful delete.'),
      deletionGracePeriodSeconds: int('Seconds the object has to stop before it is removed.', 'int64'),
      labels: stringMap('Key/value pairs that selectors (labelSelector) match.'),
      annotations: stringMap('Key/value pairs for tools; not used for selection.'),
      ownerReferences: list(ref(`${META}OwnerReference`), 'Objects this one depends on.'),
      finalizers: strings('Must be empty before the object is removed.'),
      managedFields: list(
        ref(`${META}ManagedFieldsEntry`),
        'Which field manager owns which fields (server-side apply); maintained by the server.',
      ),
    }),
    [`${META}OwnerReference`]: obj(
      'An object that owns this one.',
      {
        apiVersion: str('API version of the owner.'),
        kind: str('Kind of the owner.'),
        name: str('Name of the owner.'),
        uid: str('UID of the owner.'),
        controller: bool('Whether the owner is the managing controller.'),
        blockOwnerDeletion: bool('Whether the owner waits for this object before it is deleted.'),
      },
      ['apiVersion', 'kind', 'name', 'uid'],
    ),
    [`${META}ManagedFieldsEntry`]: obj('The fields one manager owns.', {
      manager: str('The field manager (fieldManager, else the client program).'),
      operation: str('The kind of write that set the fields.', ['Apply', 'Update']),
      apiVersion: str('The version of the object the fields are in.'),
      time: time('When the fields were last changed.'),
      fieldsType: str('The format of fieldsV1 (always "FieldsV1").'),
      fieldsV1: anyObject('The set of fields, as nested "f:name", "k:{...}" and "v:..." keys.'),
      subresource: str('The subresource written, e.g. "status".'),
    }),
    [`${META}ListMeta`]: obj('Metadata of a list.', {
      resourceVersion: str('The version to watch from to see every later change.'),
      continue: str('Set when the list was cut by limit: pass it back to get the rest.'),
      remainingItemCount: int('Items left after this page, when known.', 'int64'),
    }),
  };
}
