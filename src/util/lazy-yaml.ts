// The yaml library, loaded on first use: the node agent reads kubeconfigs and config files rarely,
// and not loading it at start keeps its resident memory down (about 4 MiB).
import { createRequire } from 'node:module';

type Yaml = typeof import('yaml');
let loaded: Yaml | undefined;

export function yaml(): Yaml {
  loaded ??= createRequire(import.meta.url)('yaml') as Yaml;
  return loaded;
}
