// The kinds a skiff API server serves from its start: kube-apiserver's built-in kinds (src/api)
// and apiextensions' CustomResourceDefinition, as upstream's server chain puts them together.
// Custom kinds join per server, in its ResourceRegistry.
import { allResourceTypes } from '../api/registry.js';
import type { ResourceType } from '../api/resource.js';
import { customResourceDefinitionResource } from './customresourcedefinition.js';

export const servedKinds: readonly ResourceType[] = [...allResourceTypes, customResourceDefinitionResource];

const byKind = new Map(servedKinds.map((rt) => [`${rt.group}/${rt.version}/${rt.kind}`, rt]));

/** The served built-in type of a kind (an owner reference names its owner so). */
export function servedKindFor(group: string, version: string, kind: string): ResourceType | undefined {
  return byKind.get(`${group}/${version}/${kind}`);
}
