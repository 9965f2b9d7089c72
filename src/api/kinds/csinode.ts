// storage.k8s.io/v1 CSINode: the CSI drivers registered on one node (named after it).
import { field } from '../errors.js';
import type { ResourceType } from '../resource.js';
import type { KubeObject, StatusCause } from '../types.js';
import { childPath, indexPath, isQualifiedName, nameIsDNSSubdomain, validateImmutable, validateMeta } from '../validation.js';
import { arr, isObject, obj, str } from './json.js';
import { validateCSIDriverName } from './persistentvolume.js';
import { age, ageColumn, column, nameColumn } from './printing.js';

const MAX_NODE_ID_LENGTH = 192;

function validateDriver(d: Record<string, unknown>, path: string, names: Set<string>): StatusCause[] {
  const name = str(d.name);
  const out = validateCSIDriverName(name, childPath(path, 'name'));
  const nodeID = str(d.nodeID);
  if (!nodeID) out.push(field.required(childPath(path, 'nodeID')));
  else if (nodeID.length > MAX_NODE_ID_LENGTH) out.push(field.invalid(childPath(path, 'nodeID'), nodeID, `must be ${MAX_NODE_ID_LENGTH} characters or less`));
  const count = obj(d.allocatable).count;
  if (typeof count === 'number' && count < 0) out.push(field.invalid(childPath(path, 'allocatable.count'), count, 'must be greater than or equal to 0'));
  if (names.has(name)) out.push(field.duplicate(childPath(path, 'name'), name));
  names.add(name);
  const keys = new Set<string>();
  for (const k of arr(d.topologyKeys)) {
    const key = str(k);
    const keysPath = childPath(path, 'topologyKeys');
    if (!key) out.push(field.required(keysPath));
    if (keys.has(key)) out.push(field.duplicate(keysPath, key));
    keys.add(key);
    out.push(...isQualifiedName(key).map((m) => field.invalid(keysPath, key, m)));
  }
  return out;
}

function validateCSINode(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const out = validateMeta(o, old, false, nameIsDNSSubdomain);
  const names = new Set<string>();
  const drivers = arr(obj(o.spec).drivers);
  drivers.forEach((d, i) => out.push(...validateDriver(obj(d), indexPath('spec.drivers', i), names)));
  if (old) {
    // A registered driver keeps its node ID and topology keys; drivers may come and go.
    const oldByName = new Map(arr(obj(old.spec).drivers).map((d) => [str(obj(d).name), obj(d)]));
    drivers.forEach((d, i) => {
      const driver = obj(d);
      const before = oldByName.get(str(driver.name));
      if (!before) return;
      const path = indexPath('spec.drivers', i);
      out.push(...validateImmutable(driver.nodeID, before.nodeID, childPath(path, 'nodeID')));
      out.push(...validateImmutable(driver.topologyKeys, before.topologyKeys, childPath(path, 'topologyKeys')));
    });
  }
  return out;
}

export const csiNodeResource: ResourceType = {
  group: 'storage.k8s.io',
  version: 'v1',
  resource: 'csinodes',
  kind: 'CSINode',
  listKind: 'CSINodeList',
  singular: 'csinode',
  namespaced: false,
  shortNames: [],
  categories: [],
  subresources: [],
  fieldSelectors: {},
  table: {
    columns: [nameColumn, column('Drivers', 'integer', 'Drivers indicates the number of CSI drivers registered on the node'), ageColumn],
    cells: (o, now) => [o.metadata?.name ?? '', isObject(o.spec) ? arr(o.spec.drivers).length : 0, age(o, now)],
  },
  hasGeneration: false,
  defaults: () => {},
  validate: validateCSINode,
};
