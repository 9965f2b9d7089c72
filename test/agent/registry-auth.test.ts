import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { credentialFor, dockerConfigEntries, imageLocation, parseRegistryKey } from '../../src/agent/registry-auth.js';

const secret = (auths: Record<string, unknown>) => dockerConfigEntries(new Map([['.dockerconfigjson', Buffer.from(JSON.stringify({ auths }))]]));

describe('registry credentials from imagePullSecrets', () => {
  it('reads where an image comes from, with Docker Hub defaults', () => {
    assert.deepEqual(imageLocation('nginx'), { host: 'docker.io', port: '', path: 'library/nginx' });
    assert.deepEqual(imageLocation('nginx:1.27'), { host: 'docker.io', port: '', path: 'library/nginx' });
    assert.deepEqual(imageLocation('docker.io/nginx'), { host: 'docker.io', port: '', path: 'library/nginx' });
    assert.deepEqual(imageLocation('team/app:v2'), { host: 'docker.io', port: '', path: 'team/app' });
    assert.deepEqual(imageLocation('registry.example.com:5000/team/app:v2'), { host: 'registry.example.com', port: '5000', path: 'team/app' });
    assert.deepEqual(imageLocation('localhost/app@sha256:' + 'a'.repeat(64)), { host: 'localhost', port: '', path: 'app' });
    assert.deepEqual(parseRegistryKey('https://index.docker.io/v1/'), { host: 'docker.io', port: '', path: '' });
  });

  it('picks the most specific matching key: path over host, exact host over a glob; port must match', () => {
    const s = secret({
      'registry.example.com': { username: 'host', password: 'p1' },
      'registry.example.com/team': { auth: Buffer.from('team:p2').toString('base64') },
      '*.example.com': { username: 'glob', password: 'p3' },
      'registry.example.com:5000': { username: 'port', password: 'p4' },
    });
    assert.equal(credentialFor('registry.example.com/team/app:1', [s])?.username, 'team');
    assert.equal(credentialFor('registry.example.com/team/app:1', [s])?.password, 'p2');
    assert.equal(credentialFor('registry.example.com/other/app:1', [s])?.username, 'host');
    assert.equal(credentialFor('mirror.example.com/app', [s])?.username, 'glob');
    assert.equal(credentialFor('registry.example.com:5000/app', [s])?.username, 'port');
    assert.equal(credentialFor('registry.example.com:5000/app', [s])?.serverAddress, 'https://registry.example.com:5000', 'a URL, as containerd reads it');
    assert.equal(credentialFor('registry.example.com/teamx/app', [s])?.username, 'host', 'a path prefix is whole segments');
    assert.equal(credentialFor('a.b.example.com/app', [s]), undefined, 'a * is one part of the name');
  });

  it('matches Docker Hub by any of its names; the first secret wins a tie; unreadable secrets give nothing', () => {
    const a = secret({ 'https://index.docker.io/v1/': { username: 'first', password: 'x' } });
    const b = secret({ 'docker.io': { username: 'second', password: 'y' } });
    assert.equal(credentialFor('nginx', [a, b])?.username, 'first');
    assert.equal(credentialFor('nginx', [a, b])?.serverAddress, undefined, 'Docker Hub is pulled from registry-1.docker.io: no address to hold it to');
    assert.equal(credentialFor('quay.io/app', [a, b]), undefined);
    assert.equal(dockerConfigEntries(new Map([['.dockerconfigjson', Buffer.from('{not json')]])).size, 0);
    const legacy = dockerConfigEntries(new Map([['.dockercfg', Buffer.from(JSON.stringify({ 'quay.io': { username: 'old', password: 'z' } }))]]));
    assert.equal(credentialFor('quay.io/team/app', [legacy])?.username, 'old');
  });
});
