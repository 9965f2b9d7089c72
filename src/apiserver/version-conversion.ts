// A built-in kind's versions converted in process, by the conversion functions its kind
// describes (upstream's generated and hand-written conversions), where a CRD's go through a webhook.
import type { ResourceType, VersionConversion } from '../api/resource.js';
import { apiVersionOf, type KubeObject } from '../api/types.js';
import type { ObjectConversion } from './object-store.js';

export class FunctionConversion implements ObjectConversion {
  readonly storageApiVersion: string;
  private readonly servedApiVersion: string;

  constructor(
    rt: ResourceType & { storageVersion: string },
    private readonly functions: VersionConversion,
  ) {
    this.storageApiVersion = apiVersionOf(rt.group, rt.storageVersion);
    this.servedApiVersion = apiVersionOf(rt.group, rt.version);
  }

  convert(objects: readonly KubeObject[], apiVersion: string): Promise<KubeObject[]> {
    return Promise.resolve(objects.map((o) => this.one(o, apiVersion)));
  }

  private one(o: KubeObject, apiVersion: string): KubeObject {
    if (o.apiVersion === apiVersion) return o;
    if (apiVersion === this.storageApiVersion && o.apiVersion === this.servedApiVersion) return this.functions.toStorage(o);
    if (apiVersion === this.servedApiVersion && o.apiVersion === this.storageApiVersion) return this.functions.fromStorage(o);
    // Nothing else is stored under its keys; an object of another apiVersion is served as its own.
    return o;
  }
}
