// core/v1 PodTemplate: a stored pod template (no controller of skiff's reads it).
import type { ResourceType } from '../resource.js';
import type { KubeObject, StatusCause } from '../types.js';
import { nameIsDNSSubdomain, validateMeta } from '../validation.js';
import { obj } from './json.js';
import { defaultPodTemplate, validatePodTemplateSpec } from './pod.js';
import { column, containerCells, formatLabels, nameColumn } from './printing.js';

function validatePodTemplate(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const out = validateMeta(o, old, true, nameIsDNSSubdomain);
  out.push(...validatePodTemplateSpec(o.template, 'template'));
  return out;
}

export const podTemplateResource: ResourceType = {
  group: '',
  version: 'v1',
  resource: 'podtemplates',
  kind: 'PodTemplate',
  listKind: 'PodTemplateList',
  singular: 'podtemplate',
  namespaced: true,
  shortNames: [],
  categories: [],
  subresources: [],
  fieldSelectors: {},
  table: {
    columns: [
      nameColumn,
      column('Containers', 'string', 'Names of each container in the template.'),
      column('Images', 'string', 'Images referenced by each container in the template.'),
      column('Pod Labels', 'string', 'The labels for the pod template.'),
    ],
    cells: (o) => {
      const template = obj(o.template);
      const [containers, images] = containerCells(template.spec);
      return [o.metadata?.name ?? '', containers, images, formatLabels(obj(template.metadata).labels)];
    },
  },
  hasGeneration: true,
  defaults: (o) => defaultPodTemplate(o.template),
  validate: validatePodTemplate,
};
