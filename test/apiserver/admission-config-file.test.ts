// --admission-control-config-file: PodSecurity's configuration, inline or in a file of its own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readAdmissionConfigFile } from '../../src/apiserver/admission/config-file.js';

const POD_SECURITY = `apiVersion: pod-security.admission.config.k8s.io/v1
kind: PodSecurityConfiguration
defaults: {enforce: baseline, enforce-version: latest, warn: restricted}
exemptions: {usernames: [admin], runtimeClasses: [], namespaces: [kube-system]}
`;

function withDir(run: (dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'admission-config-'));
  try {
    run(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const expected = {
  podSecurity: { defaults: { enforce: 'baseline', 'enforce-version': 'latest', warn: 'restricted' }, exemptions: { usernames: ['admin'], namespaces: ['kube-system'], runtimeClasses: [] } },
};

test('PodSecurity configuration inline', () =>
  withDir((dir) => {
    const inline = POD_SECURITY.split('\n').map((l) => `    ${l}`).join('\n');
    writeFileSync(join(dir, 'admission.yaml'), `apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  configuration:\n${inline}\n`);
    assert.deepEqual(readAdmissionConfigFile(join(dir, 'admission.yaml')), expected);
  }));

test('PodSecurity configuration in a file of its own, relative to the AdmissionConfiguration', () =>
  withDir((dir) => {
    writeFileSync(join(dir, 'podsecurity.yaml'), POD_SECURITY);
    writeFileSync(join(dir, 'admission.yaml'), 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  path: podsecurity.yaml\n');
    assert.deepEqual(readAdmissionConfigFile(join(dir, 'admission.yaml')), expected);
  }));

test('a configuration of the wrong kind is refused at start', () =>
  withDir((dir) => {
    writeFileSync(join(dir, 'admission.yaml'), 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  configuration: {apiVersion: v1, kind: ConfigMap}\n');
    assert.throws(() => readAdmissionConfigFile(join(dir, 'admission.yaml')), /expected a PodSecurityConfiguration/);
  }));
