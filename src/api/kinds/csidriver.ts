// storage.k8s.io/v1 CSIDriver: how a CSI driver wants its volumes attached and mounted.
import { field } from '../errors.js';
import type { ResourceType } from '../resource.js';
import type { KubeObject, StatusCause } from '../types.js';
import { childPath, indexPath, pathSegmentName, validateImmutable, validateMeta } from '../validation.js';
import { arr, child, obj, str } from './json.js';
import { validateCSIDriverName } from './persistentvolume.js';
import { age, ageColumn, column, nameColumn } from './printing.js';

const FS_GROUP_POLICIES = ['File', 'None', 'ReadWriteOnceWithFSType'];
const LIFECYCLE_MODES = ['Ephemeral', 'Persistent'];

function defaultCSIDriver(o: KubeObject): void {
  const spec = child(o, 'spec');
  const orDefault = (key: string, value: unknown) => {
    if (spec[key] === undefined || spec[key] === null) spec[key] = value;
  };
  orDefault('attachRequired', true);
  orDefault('podInfoOnMount', false);
  orDefault('storageCapacity', false);
  orDefault('fsGroupPolicy', 'ReadWriteOnceWithFSType');
  orDefault('requiresRepublish', false);
  orDefault('seLinuxMount', false);
  if (arr(spec.volumeLifecycleModes).length === 0) spec.volumeLifecycleModes = ['Persistent'];
}

function validateSpec(spec: Record<string, unknown>): StatusCause[] {
  const out: StatusCause[] = [];
  // Upstream reports a missing attachRequired at "spec.attachedRequired" (sic).
  const required: [string, string][] = [['attachRequired', 'spec.attachedRequired'], ['podInfoOnMount', 'spec.podInfoOnMount'], ['storageCapacity', 'spec.storageCapacity']];
  for (const [key, path] of required) if (typeof spec[key] !== 'boolean') out.push(field.required(path));
  if (typeof spec.fsGroupPolicy !== 'string') out.push(field.required('spec.fsGroupPolicy'));
  else if (!FS_GROUP_POLICIES.includes(spec.fsGroupPolicy)) out.push(field.notSupported('spec.fsGroupPolicy', spec.fsGroupPolicy, FS_GROUP_POLICIES));
  const audiences = new Set<string>();
  arr(spec.tokenRequests).forEach((t, i) => {
    const req = obj(t);
    const path = indexPath('spec.tokenRequests', i);
    const audience = str(req.audience);
    if (audiences.has(audience)) {
      out.push(field.duplicate(childPath(path, 'audience'), audience));
      return;
    }
    audiences.add(audience);
    if (typeof req.expirationSeconds === 'number') {
      if (req.expirationSeconds < 600) out.push(field.invalid(childPath(path, 'expirationSeconds'), req.expirationSeconds, 'may not specify a duration less than 10 minutes'));
      if (req.expirationSeconds > 2 ** 32) out.push(field.invalid(childPath(path, 'expirationSeconds'), req.expirationSeconds, 'may not specify a duration larger than 2^32 seconds'));
    }
  });
  for (const m of arr(spec.volumeLifecycleModes)) {
    if (!LIFECYCLE_MODES.includes(str(m))) out.push(field.notSupported('spec.volumeLifecycleModes', str(m), LIFECYCLE_MODES));
  }
  if (typeof spec.seLinuxMount !== 'boolean') out.push(field.required('spec.seLinuxMount'));
  if (typeof spec.nodeAllocatableUpdatePeriodSeconds === 'number' && spec.nodeAllocatableUpdatePeriodSeconds < 10) {
    out.push(field.invalid('spec.nodeAllocatableUpdatePeriodSeconds', spec.nodeAllocatableUpdatePeriodSeconds, 'must be greater than or equal to 10 seconds'));
  }
  return out;
}

function validateCSIDriver(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  // The name is the driver's: upstream checks it with the driver-name rule, at "name".
  const out = validateMeta(o, old, false, pathSegmentName);
  if (!old) out.push(...validateCSIDriverName(o.metadata?.name ?? '', 'name'));
  const spec = obj(o.spec);
  out.push(...validateSpec(spec));
  if (old) {
    const oldSpec = obj(old.spec);
    out.push(...validateImmutable(spec.attachRequired, oldSpec.attachRequired, 'spec.attachRequired'));
    out.push(...validateImmutable(spec.volumeLifecycleModes, oldSpec.volumeLifecycleModes, 'spec.volumeLifecycleModes'));
  }
  return out;
}

function boolCell(v: unknown, fallback: boolean): boolean {
  return typeof v === 'boolean' ? v : fallback;
}

export const csiDriverResource: ResourceType = {
  group: 'storage.k8s.io',
  version: 'v1',
  resource: 'csidrivers',
  kind: 'CSIDriver',
  listKind: 'CSIDriverList',
  singular: 'csidriver',
  namespaced: false,
  shortNames: [],
  categories: [],
  subresources: [],
  fieldSelectors: {},
  table: {
    columns: [
      nameColumn,
      column('AttachRequired', 'boolean', 'attachRequired indicates this CSI volume driver requires an attach operation.'),
      column('PodInfoOnMount', 'boolean', 'podInfoOnMount indicates this CSI volume driver requires additional pod information (like podName, podUID, etc.) during mount operations, if set to true.'),
      column('StorageCapacity', 'boolean', 'storageCapacity indicates that the CSI volume driver wants pod scheduling to consider the storage capacity that the driver deployment will report.'),
      column('TokenRequests', 'string', "tokenRequests indicates the CSI driver needs pods' service account tokens it is mounting volume for to do necessary authentication."),
      column('RequiresRepublish', 'boolean', 'requiresRepublish indicates the CSI driver wants `NodePublishVolume` being periodically called to reflect any possible change in the mounted volume.'),
      column('Modes', 'string', 'volumeLifecycleModes defines what kind of volumes this CSI volume driver supports.'),
      ageColumn,
    ],
    cells: (o, now) => {
      const spec = obj(o.spec);
      const tokens = Array.isArray(spec.tokenRequests) ? spec.tokenRequests.map((t) => str(obj(t).audience)).join(',') : '<unset>';
      const modes = arr(spec.volumeLifecycleModes).map(str).join(',') || '<none>';
      return [
        o.metadata?.name ?? '',
        boolCell(spec.attachRequired, true),
        boolCell(spec.podInfoOnMount, false),
        boolCell(spec.storageCapacity, false),
        tokens,
        boolCell(spec.requiresRepublish, false),
        modes,
        age(o, now),
      ];
    },
  },
  hasGeneration: false,
  defaults: defaultCSIDriver,
  validate: validateCSIDriver,
};
