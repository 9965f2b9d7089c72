// core/v1 Event (the legacy events API kubectl and client-go's recorder use).
import { field } from '../errors.js';
import type { ResourceType } from '../resource.js';
import type { KubeObject, ObjectMeta, StatusCause } from '../types.js';
import { isDNS1123Subdomain, pathSegmentName, validateMeta, validateQualifiedName } from '../validation.js';
import { num, obj, optNum, str } from './json.js';
import { column, since } from './printing.js';

export interface ObjectReference {
  kind?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  apiVersion?: string;
  resourceVersion?: string;
  fieldPath?: string;
}

export interface Event extends KubeObject {
  metadata: ObjectMeta;
  involvedObject: ObjectReference;
  reason?: string;
  message?: string;
  source?: { component?: string; host?: string };
  firstTimestamp?: string | null;
  lastTimestamp?: string | null;
  count?: number;
  type?: 'Normal' | 'Warning' | string;
  eventTime?: string | null;
  series?: { count?: number; lastObservedTime?: string };
  action?: string;
  related?: ObjectReference;
  reportingComponent?: string;
  reportingInstance?: string;
}

const REPORTING_INSTANCE_LIMIT = 128;
const ACTION_LIMIT = 128;
const REASON_LIMIT = 128;
const NOTE_LIMIT = 1024;

/** Upstream legacyValidateEvent for requests through core/v1. */
function validateEvent(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  // Events accept any name that works as a path segment: upstream applies no DNS rule here.
  const out = validateMeta(o, old, true, pathSegmentName);
  const involved = obj(o.involvedObject);
  const involvedNs = str(involved.namespace);
  const ns = o.metadata?.namespace ?? '';
  if (!o.eventTime) {
    if (involvedNs === '') {
      if (ns !== '' && ns !== 'default') out.push(field.invalid('involvedObject.namespace', involvedNs, 'does not match event.namespace'));
    } else if (ns !== involvedNs) {
      out.push(field.invalid('involvedObject.namespace', involvedNs, 'does not match event.namespace'));
    }
  } else {
    // Events written with eventTime ("new" events) must say who reported what.
    if (involvedNs === '' && ns !== 'default' && ns !== 'kube-system') {
      out.push(field.invalid('involvedObject.namespace', involvedNs, 'does not match event.namespace'));
    }
    const rc = str(o.reportingComponent);
    if (rc === '') out.push(field.required('reportingComponent'));
    out.push(...validateQualifiedName(rc, 'reportingComponent'));
    const ri = str(o.reportingInstance);
    if (ri === '') out.push(field.required('reportingInstance'));
    if (ri.length > REPORTING_INSTANCE_LIMIT) out.push(field.invalid('reportingInstance', '', `can have at most ${REPORTING_INSTANCE_LIMIT} characters`));
    const action = str(o.action);
    if (action === '') out.push(field.required('action'));
    if (action.length > ACTION_LIMIT) out.push(field.invalid('action', '', `can have at most ${ACTION_LIMIT} characters`));
    const reason = str(o.reason);
    if (reason === '') out.push(field.required('reason'));
    if (reason.length > REASON_LIMIT) out.push(field.invalid('reason', '', `can have at most ${REASON_LIMIT} characters`));
    if (str(o.message).length > NOTE_LIMIT) out.push(field.invalid('message', '', `can have at most ${NOTE_LIMIT} characters`));
  }
  out.push(...isDNS1123Subdomain(ns).map((m) => field.invalid('namespace', ns, m)));
  return out;
}

/** "source" as kubectl prints and selects it: source.component, else reportingComponent. */
function eventSource(o: KubeObject): string {
  return str(obj(o.source).component) || str(o.reportingComponent);
}

export const eventResource: ResourceType = {
  group: '',
  version: 'v1',
  resource: 'events',
  kind: 'Event',
  listKind: 'EventList',
  singular: 'event',
  namespaced: true,
  shortNames: ['ev'],
  categories: [],
  subresources: [],
  fieldSelectors: {
    'involvedObject.kind': (o) => str(obj(o.involvedObject).kind),
    'involvedObject.namespace': (o) => str(obj(o.involvedObject).namespace),
    'involvedObject.name': (o) => str(obj(o.involvedObject).name),
    'involvedObject.uid': (o) => str(obj(o.involvedObject).uid),
    'involvedObject.apiVersion': (o) => str(obj(o.involvedObject).apiVersion),
    'involvedObject.resourceVersion': (o) => str(obj(o.involvedObject).resourceVersion),
    'involvedObject.fieldPath': (o) => str(obj(o.involvedObject).fieldPath),
    reason: (o) => str(o.reason),
    reportingComponent: (o) => str(o.reportingComponent),
    source: eventSource,
    type: (o) => str(o.type),
  },
  table: {
    columns: [
      column('Last Seen', 'string', 'Time since the event was last observed.'),
      column('Type', 'string', 'Type of the event: Normal or Warning.'),
      column('Reason', 'string', 'Short machine-readable reason for the event.'),
      column('Object', 'string', 'The object the event is about, as kind/name.'),
      column('Subobject', 'string', 'Field path within the object, such as a container.', 1),
      column('Source', 'string', 'Component (and host) that reported the event.', 1),
      column('Message', 'string', 'Human-readable description of the event.'),
      column('First Seen', 'string', 'Time since the event was first observed.', 1),
      column('Count', 'string', 'Number of times the event occurred.', 1),
      column('Name', 'string', 'Name of the event object.', 1, 'name'),
    ],
    cells(o, now) {
      const firstTimestamp = o.firstTimestamp ? since(o.firstTimestamp, now) : since(o.eventTime, now);
      let lastTimestamp = o.lastTimestamp ? since(o.lastTimestamp, now) : firstTimestamp;
      let count = num(o.count);
      const series = obj(o.series);
      if (o.series && typeof o.series === 'object') {
        lastTimestamp = since(series.lastObservedTime, now);
        count = optNum(series.count) ?? 0;
      } else if (count === 0) {
        // Singleton events of the newer API carry no count.
        count = 1;
      }
      const involved = obj(o.involvedObject);
      const kind = str(involved.kind).toLowerCase();
      const target = str(involved.name) ? `${kind}/${str(involved.name)}` : kind;
      const host = str(obj(o.source).host) || str(o.reportingInstance);
      const component = eventSource(o);
      return [
        lastTimestamp,
        str(o.type),
        str(o.reason),
        target,
        str(involved.fieldPath),
        host ? `${component}, ${host}` : component,
        str(o.message).trim(),
        firstTimestamp,
        count,
        o.metadata?.name ?? '',
      ];
    },
  },
  hasGeneration: false,
  defaults: () => {},
  validate: validateEvent,
};
