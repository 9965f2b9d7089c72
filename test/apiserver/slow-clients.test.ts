// Slow clients are cut, as upstream's ReadHeaderTimeout cuts them: a TLS handshake that never
// finishes, a request whose headers trickle in (slowloris). An idle keep-alive connection is not a
// slow client and stays. Here with a 400 ms timeout instead of upstream's 32 s.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import tls from 'node:tls';
import { startInProcessServer, type InProcessServer } from '../support/in-process.js';
import { eventually } from '../support/eventually.js';

describe('slow clients', () => {
  let srv: InProcessServer;
  let port: number;
  before(async () => {
    srv = await startInProcessServer({ readHeaderTimeoutMs: 400 });
    port = Number(new URL(srv.url).port);
  });
  after(() => srv.stop());

  const open = (): Promise<tls.TLSSocket> =>
    new Promise((resolve, reject) => {
      const s = tls.connect({ host: '127.0.0.1', port, ...srv.adminTls, ALPNProtocols: ['http/1.1'] }, () => resolve(s));
      s.once('error', reject);
    });
  const closed = (s: net.Socket) => {
    let done = false;
    s.once('close', () => (done = true));
    s.on('error', () => {});
    return () => done || s.destroyed;
  };

  it('cuts a connection that never finishes its TLS handshake', async () => {
    const s = net.connect(port, '127.0.0.1');
    const isClosed = closed(s);
    await eventually(isClosed, 5_000, 'the server to cut the handshake-less connection');
  });

  it('cuts a client whose headers trickle in, however steadily', async () => {
    const s = await open();
    const isClosed = closed(s);
    s.write('GET /api HTTP/1.1\r\nHost: x\r\n');
    const drip = setInterval(() => !s.destroyed && s.write('X-Slow: 1\r\n'), 50);
    try {
      await eventually(isClosed, 5_000, 'the server to cut the slowloris connection');
    } finally {
      clearInterval(drip);
    }
  });

  it('keeps an idle keep-alive connection past the header timeout, and serves its next request', async () => {
    const s = await open();
    const isClosed = closed(s);
    let text = '';
    s.setEncoding('utf8');
    s.on('data', (d: string) => (text += d));
    s.write('GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n');
    await eventually(() => /^HTTP\/1\.1 200 [^]*\r\n\r\n[^]*ok/.test(text), 5_000, 'the first answer');
    // Idle well past the header timeout: it is between requests, not slow within one.
    const idleUntil = Date.now() + 1_500;
    await eventually(() => Date.now() > idleUntil || isClosed(), 5_000, 'an idle second and a half');
    assert.equal(isClosed(), false, 'the idle keep-alive connection was cut');
    text = '';
    s.write('GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n');
    await eventually(() => /^HTTP\/1\.1 200 [^]*\r\n\r\n[^]*ok/.test(text), 5_000, 'the second answer on the same connection');
    s.destroy();
  });
});
