import { type CoreEvent, eventTable } from '#lib/kube/printers/events.ts';
import { podTable } from '#lib/kube/printers/pods.ts';
import { eventFieldSelectorFields, podFieldSelectorFields } from '#lib/kube/selectors.ts';
import type { Pod } from '#lib/kube/types.ts';
import type { Store } from '#lib/store/index.ts';
import type { Listable } from './list.ts';

/** Pods as a listable resource: paginated in (namespace, name) order, namespace pushed into SQL. */
export const podsResource = (store: Store): Listable<Pod> => ({
  resource: 'pods',
  listKind: 'PodList',
  fields: podFieldSelectorFields,
  read(namespace, eq, after, limit) {
    const ns = namespace ?? eq.get('metadata.namespace');
    const name = eq.get('metadata.name');
    if (ns !== undefined && name !== undefined && !after) {
      const pod = store.pods.get(ns, name);
      return { items: pod ? [pod] : [], resourceVersion: store.rv.current };
    }
    const page = store.pods.list({
      namespace: ns,
      after,
      limit: limit === undefined ? undefined : limit + 1,
    });
    if (limit === undefined || page.items.length <= limit) return page;
    const items = page.items.slice(0, limit);
    const last = items[limit - 1]!.metadata;
    return { items, resourceVersion: page.resourceVersion, next: [last.namespace!, last.name!] };
  },
  table: (items, now, opts) => podTable(items, now, opts),
  encode: (pod) => store.pods.encodeItem(pod),
  encodeObject: (pod) => store.pods.encode(pod),
});

/** Events as a listable resource, with the involved object pushed into SQL. */
export const eventsResource = (store: Store): Listable<CoreEvent> => ({
  resource: 'events',
  listKind: 'EventList',
  fields: eventFieldSelectorFields,
  read(namespace, eq, after) {
    const page = store.events.list({
      namespace: namespace ?? eq.get('metadata.namespace'),
      involvedName: eq.get('involvedObject.name'),
      involvedNamespace: eq.get('involvedObject.namespace'),
    }) as { items: CoreEvent[]; resourceVersion: number };
    if (!after) return page;
    // A continue token names the last event served. Events are kept in time order, not name order,
    // so the next page starts after that event wherever it is; if it is gone, the list ends (it was
    // served again from the start before, and `describe` followed the tokens forever).
    const i = page.items.findIndex((e) => e.metadata.namespace === after[0] && e.metadata.name === after[1]);
    return { ...page, items: i < 0 ? [] : page.items.slice(i + 1) };
  },
  table: (items, now, opts) => eventTable(items, now, opts),
});
