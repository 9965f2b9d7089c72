// --admission-control-config-file: upstream's AdmissionConfiguration, whose plugins each carry
// their configuration inline or in a file of its own. Only PodSecurity reads one in skiff.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { arr, isObject, type JsonObject } from '../../api/kinds/json.js';
import type { PodSecurityConfiguration } from './pod-security.js';

export interface AdmissionConfigFile {
  podSecurity?: PodSecurityConfiguration;
}

const POD_SECURITY_VERSIONS = ['pod-security.admission.config.k8s.io/v1', 'pod-security.admission.config.k8s.io/v1beta1', 'pod-security.admission.config.k8s.io/v1alpha1'];
const DEFAULT_KEYS = ['enforce', 'enforce-version', 'audit', 'audit-version', 'warn', 'warn-version'] as const;
const EXEMPTION_KEYS = ['usernames', 'namespaces', 'runtimeClasses'] as const;

function strings(v: unknown, where: string): string[] {
  const list = arr(v);
  if (!list.every((s) => typeof s === 'string' && s !== '')) throw new Error(`${where}: must be a list of non-empty strings`);
  return list as string[];
}

function podSecurityConfiguration(doc: JsonObject, where: string): PodSecurityConfiguration {
  if (doc.kind !== 'PodSecurityConfiguration' || !POD_SECURITY_VERSIONS.includes(String(doc.apiVersion))) {
    throw new Error(`${where}: expected a PodSecurityConfiguration (${POD_SECURITY_VERSIONS.join(', ')}), got ${String(doc.apiVersion)} ${String(doc.kind)}`);
  }
  const out: PodSecurityConfiguration = {};
  if (isObject(doc.defaults)) {
    const defaults: NonNullable<PodSecurityConfiguration['defaults']> = {};
    for (const key of DEFAULT_KEYS) if (typeof doc.defaults[key] === 'string') defaults[key] = doc.defaults[key];
    out.defaults = defaults;
  }
  if (isObject(doc.exemptions)) {
    const e = doc.exemptions;
    out.exemptions = Object.fromEntries(EXEMPTION_KEYS.map((k) => [k, strings(e[k], `${where}: exemptions.${k}`)]));
  }
  return out;
}

/** Reads the file; a plugin's `path` is relative to it, as upstream reads it. */
export function readAdmissionConfigFile(path: string): AdmissionConfigFile {
  const doc: unknown = parseYaml(readFileSync(path, 'utf8'));
  if (!isObject(doc) || doc.kind !== 'AdmissionConfiguration') throw new Error(`${path}: not an AdmissionConfiguration`);
  const out: AdmissionConfigFile = {};
  for (const plugin of arr(doc.plugins)) {
    if (!isObject(plugin) || plugin.name !== 'PodSecurity') continue;
    let config = plugin.configuration;
    let where = path;
    if (config === undefined && typeof plugin.path === 'string') {
      where = resolve(dirname(path), plugin.path);
      config = parseYaml(readFileSync(where, 'utf8'));
    }
    if (isObject(config)) out.podSecurity = podSecurityConfiguration(config, where);
  }
  return out;
}
