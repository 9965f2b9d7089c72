// Request bodies as they arrive on the wire: in many small pieces, chunked, or cut off by a client
// that goes away. A body is used whole or not at all, and the server keeps serving.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { connect as netConnect, type AddressInfo } from 'node:net';
import { connect, type TLSSocket } from 'node:tls';
import { isStatusError } from '../../src/api/errors.js';
import { readBody } from '../../src/apiserver/http/codec.js';
import type { KubeObject } from '../../src/api/types.js';
import type { ApiClient } from '../../src/client/rest.js';
import { startInProcessServer, type InProcessServer } from '../support/in-process.js';
import { eventually } from '../support/eventually.js';

const CM = '/api/v1/namespaces/default/configmaps';

describe('request bodies on the wire', () => {
  let srv: InProcessServer;
  let c: ApiClient;
  before(async () => {
    srv = await startInProcessServer();
    c = srv.client();
  });
  after(async () => srv.stop());

  async function open(): Promise<{ socket: TLSSocket; text: () => string }> {
    const socket = connect({ host: '127.0.0.1', port: Number(new URL(srv.url).port), ...srv.adminTls });
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (text += d));
    socket.on('error', () => {});
    await new Promise<void>((resolve, reject) => socket.once('secureConnect', resolve).once('error', reject));
    return { socket, text: () => text };
  }

  it('takes a body sent in many pieces, and a chunked one', async () => {
    const { socket, text } = await open();
    try {
      const body = JSON.stringify({ metadata: { name: 'pieces' }, data: { k: 'v'.repeat(5000) } });
      socket.write(`POST ${CM} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`);
      for (let i = 0; i < body.length; i += 700) {
        socket.write(body.slice(i, i + 700));
        await new Promise((r) => setImmediate(r));
      }
      await eventually(() => /^HTTP\/1\.1 201 /.test(text()), 5000, 'a 201 for the body sent in pieces');
      const chunked = JSON.stringify({ metadata: { name: 'chunked' } });
      socket.write(`POST ${CM} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`);
      for (const part of [chunked.slice(0, 10), chunked.slice(10)]) socket.write(`${Buffer.byteLength(part).toString(16)}\r\n${part}\r\n`);
      socket.write('0\r\n\r\n');
      await eventually(() => (text().match(/HTTP\/1\.1 201 /g) ?? []).length === 2, 5000, 'a 201 for the chunked body');
    } finally {
      socket.destroy();
    }
    assert.equal((await c.get<KubeObject & { data: Record<string, string> }>(`${CM}/pieces`)).data.k.length, 5000);
    assert.equal((await c.get<KubeObject>(`${CM}/chunked`)).metadata.name, 'chunked');
  });

  /** Requests counted in the server's metrics for ConfigMap creates with this status code. */
  async function createsAnswered(code: number): Promise<number> {
    const text = String(await c.get('/metrics'));
    let n = 0;
    for (const line of text.split('\n')) {
      if (line.startsWith('apiserver_request_total{') && line.includes('verb="POST"') && line.includes('resource="configmaps"') && line.includes(`code="${code}"`)) {
        n += Number(line.slice(line.lastIndexOf(' ') + 1));
      }
    }
    return n;
  }

  it('writes nothing when the client leaves halfway through a body, answers it as a 400 and keeps serving', async () => {
    const before = await createsAnswered(400);
    const { socket } = await open();
    const body = JSON.stringify({ metadata: { name: 'half' }, data: { k: 'v'.repeat(1000) } });
    socket.write(`POST ${CM} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`);
    socket.write(body.slice(0, 300));
    await new Promise((r) => setImmediate(r));
    socket.destroy();
    await eventually(async () => (await createsAnswered(400)) === before + 1, 5000, 'the cut-off create to end as a 400');
    await assert.rejects(c.get(`${CM}/half`), (e: unknown) => (e as { code?: number }).code === 404);
  });

  it('settles reading the body of a request whose client left before it was read', async () => {
    let outcome: Promise<unknown> | undefined;
    let arrived = false;
    const server = createServer((req) => {
      arrived = true;
      // As a handler that authenticated first: the client is gone before the body is read.
      req.socket.once('close', () => setImmediate(() => (outcome = readBody(req).then(() => 'read', (e: unknown) => e))));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const socket = netConnect((server.address() as AddressInfo).port, '127.0.0.1');
      await new Promise<void>((r) => socket.once('connect', r));
      socket.write('POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789');
      await eventually(() => arrived, 5000, 'the request to arrive');
      socket.destroy();
      await eventually(() => outcome, 5000, 'the handler to start reading');
      const result = await Promise.race([outcome!, new Promise((r) => setTimeout(() => r('hung'), 3000))]);
      assert.ok(isStatusError(result) && result.code === 400, `expected a 400, got ${String(result)}`);
    } finally {
      server.close();
    }
  });
});
