// The client's HTTP/2 slots: requests beyond its limit wait, and a heartbeat (urgent) waits ahead
// of the others, so thousands of simulated nodes sharing one client renew their Leases on time.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http2, { type Http2SecureServer, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { createCertificateAuthority, issueCertificate } from '../../src/pki/certificates.js';
import { H2Sessions } from '../../src/client/h2-sessions.js';
import { eventually } from '../support/eventually.js';

describe('HTTP/2 sessions', () => {
  let server: Http2SecureServer;
  let url = '';
  let ca = '';
  /** Requests the server holds, by path, until the test answers them. */
  const held = new Map<string, ServerHttp2Stream>();
  before(async () => {
    const authority = await createCertificateAuthority('test-ca');
    const cert = await issueCertificate(authority, { commonName: 'localhost', hosts: ['127.0.0.1'], usage: 'server' });
    ca = authority.certPem;
    server = http2.createSecureServer({ cert: cert.certPem, key: cert.keyPem });
    server.on('stream', (stream, headers) => held.set(String(headers[':path']), stream));
    // A session the client closes at the end is no failure of the test.
    server.on('session', (session) => session.on('error', () => {}));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  it('hands a freed slot to a waiting heartbeat before the requests that waited longer', async () => {
    const sessions = new H2Sessions({ ca }, { maxRequests: 1 });
    try {
      const closed: Promise<unknown>[] = [];
      const send = async (path: string, urgent: boolean) => {
        const s = await sessions.open(url, { ':method': 'GET', ':path': path }, { hasBody: false, longRunning: false, urgent });
        closed.push(new Promise((r) => s.once('close', r)));
        s.resume();
        return path;
      };
      const order: string[] = [];
      const track = (p: Promise<string>) => p.then((path) => order.push(path));
      const first = track(send('/first', false));
      await eventually(() => held.has('/first'), 5_000, 'the first request at the server');
      // The one slot is taken: a pod write and then a renewal wait for it.
      const write = track(send('/pod-write', false));
      const renewal = track(send('/renewal', true));
      await first;
      held.get('/first')!.respond({ ':status': 200 }, { endStream: true });
      await eventually(() => held.has('/renewal'), 5_000, 'the renewal at the server');
      assert.deepEqual(order, ['/first', '/renewal'], 'the renewal got the slot; the write still waits');
      held.get('/renewal')!.respond({ ':status': 200 }, { endStream: true });
      await Promise.all([renewal, write]);
      assert.deepEqual(order, ['/first', '/renewal', '/pod-write']);
      await eventually(() => held.has('/pod-write'), 5_000, 'the write at the server');
      held.get('/pod-write')!.respond({ ':status': 200 }, { endStream: true });
      await Promise.all(closed);
    } finally {
      sessions.close();
    }
  });
});
