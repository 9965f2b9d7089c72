// Hostile connections, as opposed to hostile requests (fuzz.test.ts): header floods, slowloris,
// half-closed connections, connections that never finish their TLS handshake, an HTTP/2
// rapid-reset flood, and thousands of watches from one client. The server answers each with a
// Kubernetes Status or a clean close, keeps serving everyone else meanwhile, and lets go of
// everything a client held once it leaves.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import http2 from 'node:http2';
import { TestServer, eventually } from '../support/cluster.js';
import { parseKubeconfig } from '../../src/pki/kubeconfig.js';

interface RawAnswer {
  data: string;
  closed: boolean;
}

describe('hostile connections', () => {
  const s = new TestServer('hostile-conn');
  let server: URL;
  let creds: { ca: string; cert: string; key: string };
  before(async () => {
    await s.start();
    const kc = parseKubeconfig(readFileSync(s.kubeconfig, 'utf8'), (p) => readFileSync(p, 'utf8'));
    server = new URL(kc.server);
    creds = { ca: kc.caPem!, cert: kc.clientCertPem!, key: kc.clientKeyPem! };
  });
  after(async () => {
    await s.stop();
    s.cleanup();
  });

  const tlsOptions = () => ({ host: server.hostname, port: Number(server.port), ...creds, ALPNProtocols: ['http/1.1'], servername: 'localhost' });

  /** Sends raw bytes over HTTP/1.1 (optionally half-closing after them); what came back, and whether the server closed. */
  function raw(payload: string, o: { halfClose?: boolean; waitMs?: number } = {}): Promise<RawAnswer> {
    return new Promise((resolve) => {
      const sock = tls.connect(tlsOptions(), () => {
        sock.write(payload);
        if (o.halfClose) sock.end();
      });
      let data = '';
      sock.setEncoding('utf8');
      sock.on('data', (d: string) => (data += d));
      sock.on('error', () => {});
      const t = setTimeout(() => {
        sock.destroy();
        resolve({ data, closed: false });
      }, o.waitMs ?? 10_000);
      sock.on('close', () => {
        clearTimeout(t);
        resolve({ data, closed: true });
      });
    });
  }

  async function ready(): Promise<void> {
    assert.match(await s.k(['get', '--raw', '/readyz']), /ok/);
  }

  async function watchGauge(): Promise<number> {
    const text = await s.k(['get', '--raw', '/metrics']);
    let sum = 0;
    for (const line of text.split('\n')) if (line.startsWith('apiserver_longrunning_requests{') && line.includes('verb="WATCH"')) sum += Number(line.split(' ').pop());
    return sum;
  }

  it('answers a header flood with 431 and a clean close, on HTTP/1.1 and HTTP/2, and keeps serving', async () => {
    const big = await raw(`GET /api HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 200 }, (_, i) => `X-${i}: ${'b'.repeat(500)}\r\n`).join('')}\r\n`);
    assert.ok(big.closed, 'the connection was closed');
    assert.match(big.data, /^HTTP\/1\.1 431 /);
    const many = await raw(`GET /api HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 5000 }, (_, i) => `X${i}: 1\r\n`).join('')}\r\n`);
    assert.ok(many.closed);
    assert.match(many.data, /^HTTP\/1\.1 431 /);
    const h2 = await new Promise<string>((resolve) => {
      const c = http2.connect(server.origin, creds);
      c.on('error', () => {});
      const headers: http2.OutgoingHttpHeaders = { ':path': '/api' };
      for (let i = 0; i < 2000; i++) headers[`x-${i}`] = 'v'.repeat(50);
      const st = c.request(headers);
      st.on('response', (h) => resolve(`status ${h[':status']}`));
      st.on('error', () => {});
      st.on('close', () => {
        resolve(`reset ${st.rstCode}`);
        c.close();
      });
      st.end();
    });
    assert.match(h2, /^(reset \d+|status 431)$/, 'the stream was refused, not served');
    await ready();
  });

  it('answers a request whose client half-closes after sending it; a body cut short by a half-close gets 400 and a clean close', async () => {
    const whole = await raw('GET /api HTTP/1.1\r\nHost: x\r\n\r\n', { halfClose: true });
    assert.match(whole.data, /^HTTP\/1\.1 200 /);
    assert.match(whole.data, /"kind":"APIVersions"/);
    assert.ok(whole.closed);
    const cut = await raw('POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":', { halfClose: true });
    assert.ok(cut.closed);
    assert.match(cut.data, /^HTTP\/1\.1 400 /);
    await ready();
  });

  it('keeps serving while 300 slowloris connections trickle their headers and 200 never start their TLS handshake', async () => {
    const sockets: net.Socket[] = [];
    try {
      for (let i = 0; i < 200; i++) {
        const plain = net.connect(Number(server.port), server.hostname);
        plain.on('error', () => {});
        sockets.push(plain);
      }
      await Promise.all(
        Array.from({ length: 300 }, () =>
          new Promise<void>((resolve) => {
            const t = tls.connect(tlsOptions(), () => {
              t.write('GET /api HTTP/1.1\r\nHost: x\r\n');
              resolve();
            });
            t.on('error', () => resolve());
            sockets.push(t);
          }),
        ),
      );
      const drip = setInterval(() => {
        for (const t of sockets) if (t instanceof tls.TLSSocket && !t.destroyed) t.write('X-Slow: 1\r\n');
      }, 500);
      try {
        // Everyone else is still served, one request after another.
        for (let i = 0; i < 5; i++) {
          await ready();
          assert.match(await s.k(['get', 'namespaces', '-o', 'name']), /namespace\/default/);
        }
      } finally {
        clearInterval(drip);
      }
    } finally {
      for (const t of sockets) t.destroy();
    }
  });

  it('survives an HTTP/2 rapid-reset flood: 5,000 streams opened and cancelled at once', async () => {
    const c = http2.connect(server.origin, creds);
    c.on('error', () => {});
    await new Promise<void>((resolve) => c.once('connect', () => resolve()));
    for (let i = 0; i < 5000 && !c.destroyed; i++) {
      const st = c.request({ ':path': '/api/v1/namespaces/default/configmaps' });
      st.on('error', () => {});
      st.close(http2.constants.NGHTTP2_CANCEL);
    }
    c.destroy();
    await ready();
  });

  it('serves 2,500 watches from one client over HTTP/2 and 300 over HTTP/1.1, delivers an event to each, and lets them all go when the client leaves', async () => {
    const baseline = await watchGauge();
    const path = '/api/v1/namespaces/default/configmaps?watch=true&fieldSelector=metadata.name%3Dthe-one';
    const sessions = Array.from({ length: 3 }, () => {
      const c = http2.connect(server.origin, creds);
      c.on('error', () => {});
      return c;
    });
    const sockets: tls.TLSSocket[] = [];
    let delivered = 0;
    const seen = (text: string) => {
      if (text.includes('"type":"ADDED"')) delivered++;
    };
    try {
      for (let i = 0; i < 2500; i++) {
        const st = sessions[i % sessions.length]!.request({ ':path': path });
        st.setEncoding('utf8');
        let buf = '';
        st.on('data', (d: string) => {
          buf += d;
          if (buf.includes('\n')) {
            seen(buf);
            buf = '';
          }
        });
        st.on('error', () => {});
        st.end();
      }
      for (let i = 0; i < 300; i++) {
        const t = tls.connect(tlsOptions(), () => t.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`));
        t.setEncoding('utf8');
        t.on('data', (d: string) => seen(d));
        t.on('error', () => {});
        sockets.push(t);
      }
      await eventually(async () => (await watchGauge()) >= baseline + 2800, 60_000, 'every watch registered', 500);
      await s.k(['create', 'configmap', 'the-one', '--from-literal=a=b']);
      await eventually(() => delivered >= 2800, 60_000, `the event reached every watch (${delivered})`);
    } finally {
      for (const c of sessions) c.destroy();
      for (const t of sockets) t.destroy();
    }
    await eventually(async () => (await watchGauge()) <= baseline, 30_000, 'every watch let go', 500);
    await ready();
  });
});
