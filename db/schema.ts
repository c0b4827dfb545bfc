import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

/** Key/value facts about the metabase itself (resource-version and status sequence counters). */
export const meta = sqliteTable('meta', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
});

/** Desired pods: the whole object as JSON, plus the columns Outpost filters on. */
export const pods = sqliteTable(
  'pods',
  {
    uid: text('uid').primaryKey(),
    namespace: text('namespace').notNull(),
    name: text('name').notNull(),
    nodeName: text('node_name').notNull(),
    source: text('source', { enum: ['manifest', 'cloud', 'api'] }).notNull(),
    /** Where the pod came from: the manifest file path, or the cloud's resourceVersion. */
    origin: text('origin'),
    object: text('object').notNull(),
    resourceVersion: integer('resource_version').notNull(),
    deletedAt: text('deleted_at'),
  },
  (t) => [uniqueIndex('pods_ns_name').on(t.namespace, t.name), index('pods_rv').on(t.resourceVersion)],
);

/** The latest status of each pod, as the status patch kubelet's status manager would send. */
export const podStatus = sqliteTable('pod_status', {
  uid: text('uid').primaryKey(),
  namespace: text('namespace').notNull(),
  name: text('name').notNull(),
  /** Per-node increasing sequence number, so uploads can be ordered. */
  seq: integer('seq').notNull(),
  patch: text('patch').notNull(),
  updatedAt: text('updated_at').notNull(),
  /** The seq last acknowledged by the cloud (null: never uploaded). */
  uploadedSeq: integer('uploaded_seq'),
});

/** Core v1 Events recorded at the edge. */
export const events = sqliteTable(
  'events',
  {
    uid: text('uid').primaryKey(),
    namespace: text('namespace').notNull(),
    name: text('name').notNull(),
    involvedKind: text('involved_kind').notNull(),
    involvedNamespace: text('involved_namespace').notNull(),
    involvedName: text('involved_name').notNull(),
    involvedUid: text('involved_uid'),
    reason: text('reason').notNull(),
    type: text('type').notNull(),
    object: text('object').notNull(),
    lastTimestamp: text('last_timestamp').notNull(),
    resourceVersion: integer('resource_version').notNull(),
  },
  (t) => [
    index('events_involved').on(t.involvedNamespace, t.involvedName),
    index('events_last').on(t.lastTimestamp),
  ],
);

/** Namespaced objects that pods consume: ConfigMap and Secret. */
export const objects = sqliteTable(
  'objects',
  {
    kind: text('kind').notNull(),
    namespace: text('namespace').notNull(),
    name: text('name').notNull(),
    uid: text('uid').notNull(),
    source: text('source', { enum: ['manifest', 'cloud', 'api'] }).notNull(),
    origin: text('origin'),
    object: text('object').notNull(),
    resourceVersion: integer('resource_version').notNull(),
  },
  (t) => [primaryKey({ columns: [t.kind, t.namespace, t.name] }), index('objects_rv').on(t.resourceVersion)],
);

/** Device mappers registered over DMI. */
export const mappers = sqliteTable('mappers', {
  name: text('name').primaryKey(),
  protocol: text('protocol').notNull(),
  address: text('address').notNull(),
  version: text('version'),
  apiVersion: text('api_version'),
  state: text('state').notNull(),
  updatedAt: text('updated_at').notNull(),
});

/** Devices (devices.kubeedge.io/v1beta1 Device): the object with its reported twins in status. */
export const devices = sqliteTable(
  'devices',
  {
    uid: text('uid').primaryKey(),
    namespace: text('namespace').notNull(),
    name: text('name').notNull(),
    protocol: text('protocol').notNull(),
    model: text('model'),
    source: text('source', { enum: ['manifest', 'cloud', 'api'] }).notNull(),
    origin: text('origin'),
    object: text('object').notNull(),
    resourceVersion: integer('resource_version').notNull(),
  },
  (t) => [uniqueIndex('devices_ns_name').on(t.namespace, t.name), index('devices_protocol').on(t.protocol)],
);

/** Device models (devices.kubeedge.io/v1beta1 DeviceModel). */
export const deviceModels = sqliteTable(
  'device_models',
  {
    uid: text('uid').primaryKey(),
    namespace: text('namespace').notNull(),
    name: text('name').notNull(),
    protocol: text('protocol'),
    source: text('source', { enum: ['manifest', 'cloud', 'api'] }).notNull(),
    origin: text('origin'),
    object: text('object').notNull(),
    resourceVersion: integer('resource_version').notNull(),
  },
  (t) => [uniqueIndex('device_models_ns_name').on(t.namespace, t.name)],
);

/** Every mutating call (restart, exec, device edit): who, what, when, result. */
export const audit = sqliteTable(
  'audit',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    at: text('at').notNull(),
    user: text('user').notNull(),
    role: text('role').notNull(),
    source: text('source'),
    verb: text('verb').notNull(),
    path: text('path').notNull(),
    namespace: text('namespace'),
    name: text('name'),
    /** What was asked, e.g. the exec command or the device patch, as JSON. */
    detail: text('detail'),
    code: integer('code').notNull(),
  },
  (t) => [index('audit_at').on(t.at)],
);

/**
 * The cloud link's ordered outbox: every change the cloud must hear of (a pod's status, an event,
 * a pod's final deletion, a device's status), written in the same transaction as the change
 * itself. The sender drains it in `id` order; a newer entry of the same kind and key replaces a
 * pending one (the cloud only needs a pod's latest status, an event's latest count), keeping the
 * age of the oldest change it carries.
 */
export const outbox = sqliteTable(
  'outbox',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    kind: text('kind', { enum: ['status', 'event', 'delete', 'device-status'] }).notNull(),
    /** What the entry is about: a pod uid (status, delete), an event uid, a device uid. */
    key: text('key').notNull(),
    /** `create` for an event the cloud has not seen yet, `update` for a repeat (count raised). */
    op: text('op'),
    payload: text('payload').notNull(),
    /** When the oldest change this entry carries was made (Unix ms). */
    createdAt: integer('created_at').notNull(),
  },
  (t) => [index('outbox_key').on(t.kind, t.key)],
);
